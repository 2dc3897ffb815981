/**
 * Exact comparison of decimal amounts given as strings or numbers ("50000.00", 10000), without
 * floating point: both sides are scaled to the same number of decimals as bigints.
 * Returns undefined when `value` is not a plain decimal.
 */
export function compareDecimal(
  value: unknown,
  threshold: string | number | bigint,
): number | undefined {
  const left = parseDecimal(value);
  const right = parseDecimal(typeof threshold === 'bigint' ? threshold.toString() : threshold);
  if (!left || !right) return undefined;
  const scale = Math.max(left.scale, right.scale);
  const a = left.units * 10n ** BigInt(scale - left.scale);
  const b = right.units * 10n ** BigInt(scale - right.scale);
  return a === b ? 0 : a > b ? 1 : -1;
}

const DECIMAL = /^(-)?(\d+)(?:\.(\d+))?$/;

function parseDecimal(value: unknown): { units: bigint; scale: number } | undefined {
  const text = typeof value === 'number' && Number.isFinite(value) ? String(value) : value;
  if (typeof text !== 'string') return undefined;
  const match = DECIMAL.exec(text.trim());
  if (!match) return undefined;
  const fraction = match[3] ?? '';
  const units = BigInt(`${match[2]}${fraction}`);
  return { units: match[1] ? -units : units, scale: fraction.length };
}
