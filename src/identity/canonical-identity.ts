import { VeridexError } from '../errors/index.js';
import { confusableSkeleton, prototypeOf } from './skeleton.js';

/** The longest identity accepted, in UTF-16 code units, before and after normalisation. */
export const MAX_IDENTITY_LENGTH = 256;

const DEFAULT_IGNORABLE = /\p{Default_Ignorable_Code_Point}/gu;
const WHITESPACE = /\s+/gu;
// Left after ignorables are removed and NFKC: controls, unassigned, private use, lone surrogates
// and any remaining format character. A name carrying one is refused rather than guessed at.
const UNSAFE = /[\p{Cc}\p{Cn}\p{Co}\p{Cs}\p{Cf}]/u;
// Characters that may render as nothing though Unicode does not call them ignorable: every
// symbol outside ASCII (general category S: U+2800 BRAILLE PATTERN BLANK and U+1D159 MUSICAL
// SYMBOL NULL NOTEHEAD are symbols, and whether any other one draws a glyph is up to the font,
// so the class is refused whole — names need no symbols beyond ASCII's `+`, `$`, `^`, …), and
// the one blank filler of another category that is not Default_Ignorable, U+16FE4 KHITAN SMALL
// SCRIPT FILLER (the Hangul fillers U+115F, U+1160, U+3164 and U+FFA0 are ignorable, so removed).
const BLANK_OR_SYMBOL = /(?![\u0000-\u007f])\p{S}|\u{16FE4}/u;

/**
 * The one form an identity (approver, proposer, operator, allowlist entry) is stored and shown
 * in: default-ignorable and zero-width characters removed, Unicode NFKC, case-folded,
 * whitespace trimmed and collapsed to single spaces. `' Alice\u200b'`, `'ALICE'` and
 * `'ａｌｉｃｅ'` all become `'alice'`. Look-alikes from other scripts (Cyrillic `аlice`) keep
 * their letters here; compare with {@link identityKey} or {@link sameIdentity}, which also
 * fold confusables.
 *
 * @throws VeridexError `identity_invalid` for a non-string, an empty result, more than
 *   {@link MAX_IDENTITY_LENGTH} code units, control, unassigned, private-use or format
 *   characters, or symbols outside ASCII and blank fillers (which can render as nothing:
 *   `alice⠀` with U+2800 would read as `alice`);
 *   `identity_ambiguous` when normalising changes how the name reads (a look-alike that NFKC
 *   would turn into another letter).
 * @example canonicalIdentity('  Payout-Bot ') // 'payout-bot'
 */
export function canonicalIdentity(text: unknown): string {
  if (typeof text !== 'string') {
    throw invalid(`an identity must be a string, got ${text === null ? 'null' : typeof text}`);
  }
  if (text.length > MAX_IDENTITY_LENGTH) {
    throw invalid(`an identity may have at most ${MAX_IDENTITY_LENGTH} characters`);
  }
  const folded = foldText(text).replace(WHITESPACE, ' ').trim();
  if (folded === '') throw invalid('an identity must not be empty or invisible');
  if (folded.length > MAX_IDENTITY_LENGTH) {
    throw invalid(`an identity may have at most ${MAX_IDENTITY_LENGTH} characters once normalised`);
  }
  const unsafe = UNSAFE.exec(folded);
  if (unsafe) {
    throw invalid(
      `an identity must not contain U+${unsafe[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')} (a control, unassigned, private-use or format character)`,
    );
  }
  const blank = BLANK_OR_SYMBOL.exec(folded);
  if (blank) {
    throw invalid(
      `an identity must not contain U+${blank[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')} (a symbol outside ASCII or a blank filler: it may render as nothing, so the name could read as another)`,
    );
  }
  const diverging = compatibilityDivergence(text);
  if (diverging !== undefined) {
    throw new VeridexError(
      'identity_ambiguous',
      `Refused identity: U+${diverging.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')} reads as "${prototypeOf(diverging)}" but normalises into another letter, so the name could pass for someone else. Use plain letters.`,
    );
  }
  return folded;
}

/**
 * The folding step of {@link canonicalIdentity}, without its checks: default-ignorable
 * (invisible) code points removed, NFKC, full case folding. Never throws; for comparing text
 * that is not an identity but must match like one (counterparty names, list entries).
 *
 * @example foldText('ＡＣＭＥ\u200b') // 'acme'
 */
export function foldText(text: string): string {
  // Case mapping can leave sequences NFKC would compose differently, so normalise on both sides.
  return (
    text
      .replace(DEFAULT_IGNORABLE, '')
      .normalize('NFKC')
      // Lower, upper, lower: full case folding's effect with what JavaScript has (ẞ → ß → SS → ss).
      .toLowerCase()
      .toUpperCase()
      .toLowerCase()
      .normalize('NFKC')
      .replace(DEFAULT_IGNORABLE, '')
  );
}

/**
 * A character NFKC turns into a letter that no longer looks like what was typed — Greek lunate
 * sigma ϲ reads as c but becomes final sigma ς — which would escape the confusable comparison.
 * (Characters confusables.txt leaves to NFKC, such as full-width letters, are not affected.)
 */
function compatibilityDivergence(text: string): string | undefined {
  for (const char of text
    .replace(DEFAULT_IGNORABLE, '')
    .toLowerCase()
    .toUpperCase()
    .toLowerCase()) {
    const prototype = prototypeOf(char);
    if (prototype === undefined || char.normalize('NFKC') === char) continue;
    const normalised = char
      .normalize('NFKC')
      .toLowerCase()
      .toUpperCase()
      .toLowerCase()
      .normalize('NFKC');
    if (confusableSkeleton(normalised) !== confusableSkeleton(prototype)) return char;
  }
  return undefined;
}

/**
 * The comparison key of an identity: the confusable skeleton (Unicode TS #39) of its
 * {@link canonicalIdentity}. Two names with the same key are the same person for every rule
 * — proposer exclusion, distinct approvers, allowlists, tiers.
 *
 * @throws VeridexError `identity_invalid` (see {@link canonicalIdentity}).
 * @example identityKey('аlice') === identityKey('Alice') // true
 */
export function identityKey(text: unknown): string {
  return confusableSkeleton(canonicalIdentity(text));
}

/**
 * True when `a` and `b` name the same identity ({@link identityKey}). Never throws: an
 * invalid identity is the same as nothing, not even itself.
 *
 * @example sameIdentity('payout-bot', 'Payout-Bot ') // true
 */
export function sameIdentity(a: unknown, b: unknown): boolean {
  const left = tryIdentityKey(a);
  return left !== undefined && left === tryIdentityKey(b);
}

/** {@link identityKey}, or `undefined` for an invalid identity. */
export function tryIdentityKey(text: unknown): string | undefined {
  try {
    return identityKey(text);
  } catch {
    return undefined;
  }
}

function invalid(why: string): VeridexError {
  return new VeridexError('identity_invalid', `Invalid identity: ${why}.`);
}
