// Stored results may hold bigint amounts (money is never a float): tag them so they survive JSON.
const BIGINT_TAG = '$veridex.bigint';

/** JSON text of `value` with bigint values tagged (`{"$veridex.bigint":"123"}`). */
export function encodeStoredJson(value: unknown): string {
  return (
    JSON.stringify(value, (_key, item) =>
      typeof item === 'bigint' ? { [BIGINT_TAG]: item.toString() } : item,
    ) ?? 'null'
  );
}

/** Parses {@link encodeStoredJson} text, restoring bigint values. */
export function decodeStoredJson(text: string): unknown {
  return JSON.parse(text, (_key, item) => {
    if (typeof item === 'object' && item !== null && !Array.isArray(item)) {
      const keys = Object.keys(item);
      if (keys.length === 1 && keys[0] === BIGINT_TAG && typeof item[BIGINT_TAG] === 'string')
        return BigInt(item[BIGINT_TAG]);
    }
    return item;
  });
}
