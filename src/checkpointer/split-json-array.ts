const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

/** A half-open byte range `[start, end)`. */
export type ByteRange = readonly [start: number, end: number];

/**
 * Splits the top-level elements of a serialised JSON array, working on UTF-8 bytes: the
 * structural characters are ASCII and never occur inside a multi-byte sequence, so no
 * decoding is needed. Scans `bytes[from, to)`, where `from` is just after the opening `[`
 * (or after a top-level comma) and `to` is the index of the closing `]`. Each element keeps
 * its exact bytes, so joining the elements with `,` inside `[` `]` gives back the input.
 *
 * Returns `undefined` when the bytes are not a well-formed sequence of elements (an empty
 * element, unbalanced brackets, an unterminated string): the caller then stores the value
 * whole instead.
 *
 * @example
 * const bytes = new TextEncoder().encode('[1,{"a":[2,3]},"x,y"]');
 * splitJsonArray(bytes, 1, bytes.length - 1); // [[1, 2], [3, 14], [15, 20]]
 */
export function splitJsonArray(
  bytes: Uint8Array,
  from: number,
  to: number,
): ByteRange[] | undefined {
  const ranges: ByteRange[] = [];
  let depth = 0;
  let inString = false;
  let start = from;
  for (let index = from; index < to; index++) {
    const byte = bytes[index]!;
    if (inString) {
      if (byte === BACKSLASH) index++;
      else if (byte === QUOTE) inString = false;
      continue;
    }
    if (byte === QUOTE) inString = true;
    else if (byte === OPEN_BRACKET || byte === OPEN_BRACE) depth++;
    else if (byte === CLOSE_BRACKET || byte === CLOSE_BRACE) {
      depth--;
      if (depth < 0) return undefined;
    } else if (byte === COMMA && depth === 0) {
      if (!hasContent(bytes, start, index)) return undefined;
      ranges.push([start, index]);
      start = index + 1;
    }
  }
  if (inString || depth !== 0 || !hasContent(bytes, start, to)) return undefined;
  ranges.push([start, to]);
  return ranges;
}

/** True for bytes that open and close a JSON array: `[` first and `]` last. */
export function isJsonArrayText(bytes: Uint8Array): boolean {
  return (
    bytes.length >= 2 && bytes[0] === OPEN_BRACKET && bytes[bytes.length - 1] === CLOSE_BRACKET
  );
}

function hasContent(bytes: Uint8Array, start: number, end: number): boolean {
  for (let index = start; index < end; index++) {
    const byte = bytes[index]!;
    // JSON insignificant whitespace: space, tab, line feed, carriage return.
    if (byte !== 0x20 && byte !== 0x09 && byte !== 0x0a && byte !== 0x0d) return true;
  }
  return false;
}
