/**
 * JSON text as PostgreSQL's `jsonb` would give it back: the same values, with every object's
 * keys in jsonb's storage order (shorter UTF-8 length first, then byte order). The tuple
 * cache uses it so that metadata it serves has the key order a read from the table has.
 * Input is JSON text a serializer produced (no duplicate keys).
 */
export function jsonbText(json: string): string {
  return JSON.stringify(orderLikeJsonb(JSON.parse(json)));
}

function orderLikeJsonb(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(orderLikeJsonb);
  if (value === null || typeof value !== 'object') return value;
  const keys = Object.keys(value).map((key) => ({ key, bytes: Buffer.from(key, 'utf8') }));
  keys.sort(
    (left, right) =>
      left.bytes.length - right.bytes.length || Buffer.compare(left.bytes, right.bytes),
  );
  const ordered: Record<string, unknown> = {};
  for (const { key } of keys) {
    // defineProperty, so that a key named __proto__ stays an ordinary key.
    Object.defineProperty(ordered, key, {
      value: orderLikeJsonb((value as Record<string, unknown>)[key]),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return ordered;
}
