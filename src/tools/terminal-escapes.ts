/** The text without its terminal escape sequences, and how many were removed. */
export interface EscapeStripping {
  text: string;
  removed: number;
}

const ESC = 0x1b;
const BEL = 0x07;
const ST = 0x9c;

/**
 * Removes terminal escape sequences, 7-bit and 8-bit (C1): CSI (`ESC [` / `0x9B` params,
 * intermediates, final byte), OSC (`ESC ]` / `0x9D` … BEL or ST), DCS, SOS, PM and APC strings
 * (`ESC P X ^ _` / `0x90 0x98 0x9E 0x9F` … ST), and two-character escapes (`ESC` intermediates
 * final). An unterminated sequence is left for the control-character pass, which removes its
 * introducer only.
 *
 * Linear: a string sequence that finds no terminator before the next possible one records
 * where its look stopped, and every later introducer before that point fails at once (this is
 * what made 400 KB of `0x90` take 20 s with a regular expression).
 */
export function stripTerminalEscapes(text: string): EscapeStripping {
  let kept = ''; // a rope, flattened once: faster than parts joined
  let removed = 0;
  let written = 0;
  // Where the last failed OSC / DCS look stopped: an introducer before it fails the same way.
  let oscFailsBefore = -1;
  let dcsFailsBefore = -1;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code !== ESC && (code < 0x90 || code > 0x9f)) continue;
    let end = -1;
    const next = text.charCodeAt(index + 1);
    if (code === 0x9b || (code === ESC && next === 0x5b)) {
      end = csi(text, index + (code === ESC ? 2 : 1));
    } else if (code === 0x9d || (code === ESC && next === 0x5d)) {
      if (index >= oscFailsBefore) {
        const result = stringSequence(text, index + (code === ESC ? 2 : 1), true);
        if (result < 0) oscFailsBefore = -result;
        else end = result;
      }
    } else if (
      code === 0x90 ||
      code === 0x98 ||
      code === 0x9e ||
      code === 0x9f ||
      (code === ESC && (next === 0x50 || next === 0x58 || next === 0x5e || next === 0x5f))
    ) {
      if (index >= dcsFailsBefore) {
        const result = stringSequence(text, index + (code === ESC ? 2 : 1), false);
        if (result < 0) dcsFailsBefore = -result;
        else end = result;
      }
    }
    if (end === -1 && code === ESC) end = twoCharacter(text, index + 1);
    if (end === -1) continue;
    kept += text.slice(written, index);
    written = end;
    removed++;
    index = end - 1;
  }
  if (removed === 0) return { text, removed };
  return { text: kept + text.slice(written), removed };
}

// Parameters [0-?]*, intermediates [ -/]*, final [@-~]; -1 when the final byte is missing.
function csi(text: string, from: number): number {
  let index = from;
  while (index < text.length && text.charCodeAt(index) >= 0x30 && text.charCodeAt(index) <= 0x3f)
    index++;
  while (index < text.length && text.charCodeAt(index) >= 0x20 && text.charCodeAt(index) <= 0x2f)
    index++;
  const final = text.charCodeAt(index);
  return final >= 0x40 && final <= 0x7e ? index + 1 : -1;
}

// A string body up to BEL (OSC only), ESC \ or ST. Returns the end, or minus the index where
// the look stopped (the body may not contain ESC, so an ESC without "\" ends it unterminated).
function stringSequence(text: string, from: number, bell: boolean): number {
  let index = from;
  while (index < text.length) {
    const code = text.charCodeAt(index);
    if (code === ST || (bell && code === BEL)) return index + 1;
    if (code === ESC) return text.charCodeAt(index + 1) === 0x5c ? index + 2 : -Math.max(index, 1);
    index++;
  }
  return -Math.max(index, 1);
}

// ESC, intermediates [ -/]*, final [0-~].
function twoCharacter(text: string, from: number): number {
  let index = from;
  while (index < text.length && text.charCodeAt(index) >= 0x20 && text.charCodeAt(index) <= 0x2f)
    index++;
  const final = text.charCodeAt(index);
  return final >= 0x30 && final <= 0x7e ? index + 1 : -1;
}
