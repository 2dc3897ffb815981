/**
 * A set of UTF-16 code units — what one position of a regular expression without the `u` flag
 * can match — as sorted, disjoint, non-adjacent inclusive ranges.
 */
export type CharSet = ReadonlyArray<readonly [number, number]>;

const LAST_CODE_UNIT = 0xffff;

/** The set of the given ranges (in any order, overlapping or not). */
export function charSet(ranges: ReadonlyArray<readonly [number, number]>): CharSet {
  const sorted = [...ranges].sort((a, b) => a[0] - b[0]);
  const result: Array<[number, number]> = [];
  for (const [low, high] of sorted) {
    const last = result.at(-1);
    if (last && low <= last[1] + 1) last[1] = Math.max(last[1], high);
    else result.push([low, high]);
  }
  return result;
}

/** Every code unit not in `set`. */
export function complement(set: CharSet): CharSet {
  const result: Array<[number, number]> = [];
  let next = 0;
  for (const [low, high] of set) {
    if (low > next) result.push([next, low - 1]);
    next = high + 1;
  }
  if (next <= LAST_CODE_UNIT) result.push([next, LAST_CODE_UNIT]);
  return result;
}

/** True when `set` holds `unit`. */
export function contains(set: CharSet, unit: number): boolean {
  for (const [low, high] of set) {
    if (unit < low) return false;
    if (unit <= high) return true;
  }
  return false;
}

const single = (text: string): [number, number] => [text.charCodeAt(0), text.charCodeAt(0)];

/** `\d` */
export const DIGITS = charSet([[0x30, 0x39]]);
/** `\w` (without the `u` and `i` flags: ASCII only) */
export const WORD = charSet([[0x30, 0x39], [0x41, 0x5a], [0x61, 0x7a], single('_')]);
/** `\s`: ECMAScript WhiteSpace and LineTerminator. */
export const SPACE = charSet([
  [0x09, 0x0d],
  [0x20, 0x20],
  [0xa0, 0xa0],
  [0x1680, 0x1680],
  [0x2000, 0x200a],
  [0x2028, 0x2029],
  [0x202f, 0x202f],
  [0x205f, 0x205f],
  [0x3000, 0x3000],
  [0xfeff, 0xfeff],
]);
/** `.` without the `s` flag: anything but a line terminator. */
export const DOT = complement(charSet([single('\n'), single('\r'), [0x2028, 0x2029]]));
/** Every code unit (`[^]`, `[\s\S]`). */
export const ANY = charSet([[0, LAST_CODE_UNIT]]);
