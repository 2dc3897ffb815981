/**
 * The role word of a possible fake turn header (README *Governed tools*, "What the model
 * sees"): ASCII or look-alike letters folded to lower-case ASCII, written together
 * (`Assistant`) or spaced out with exactly one blank — space, tab or ideographic space —
 * between every two letters (`A s s i s t a n t`, `Ｓ\tｙ\tｓ…`), which a model reads as the
 * same header. Whether the word is spaced is decided by its first two letters and then held:
 * `A user` reads as `au`, `As sistant` as `as`, so prose with single letters (`U. S. A.`,
 * `a s s`) never forms a role word unless it spells one, letter by letter, to the colon the
 * caller requires. Bounded: at most {@link MAX_ROLE_LETTERS} letters and one blank after each,
 * read once by a plain loop (no regular expression).
 */

import { foldLetter } from './look-alike-letters.js';

/** More letters than the longest role word: a longer word is no role. */
export const MAX_ROLE_LETTERS = 10;

// ASCII characters as one-character strings, by code (read with a letter's lower-case code).
const ASCII: readonly string[] = Array.from({ length: 128 }, (_, code) =>
  String.fromCharCode(code),
);

const isBlank = (code: number): boolean => code === 32 || code === 9 || code === 0x3000;

/** The letter at `index` as lower-case ASCII (look-alikes folded), or '' for none. */
function letterAt(text: string, index: number): string {
  if (index >= text.length) return '';
  const unit = text.charCodeAt(index);
  if (unit < 128) {
    return (unit >= 97 && unit <= 122) || (unit >= 65 && unit <= 90) ? ASCII[unit | 32]! : '';
  }
  return foldLetter(String.fromCodePoint(text.codePointAt(index)!));
}

const widthAt = (text: string, index: number): number =>
  text.codePointAt(index)! > 0xffff ? 2 : 1;

/** One blank then a letter at `index`. */
const spacedLetterAt = (text: string, index: number): boolean =>
  isBlank(text.charCodeAt(index)) && letterAt(text, index + 1) !== '';

/**
 * Reads the role word starting at `start`; see the module comment.
 *
 * @returns the folded letters (empty when none starts there) and the index after the last.
 * @example readRoleWord('A s s i s t a n t: hi', 0) // { role: 'assistant', end: 17 }
 */
export function readRoleWord(text: string, start: number): { role: string; end: number } {
  let role = '';
  let index = start;
  let spaced: boolean | undefined;
  while (role.length < MAX_ROLE_LETTERS) {
    const letter = letterAt(text, index);
    if (letter === '') break;
    role += letter;
    const next = index + widthAt(text, index);
    spaced ??= spacedLetterAt(text, next);
    if (!spaced) index = next;
    else if (spacedLetterAt(text, next)) index = next + 1;
    else return { role, end: next };
  }
  return { role, end: index };
}
