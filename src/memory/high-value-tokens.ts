import { foldText } from '../identity/index.js';

/**
 * High-value values — IBANs, account and card numbers, long digit runs, amounts, e-mail
 * addresses, URLs — compared in a form no spelling survives: NFKC (full width → ASCII),
 * case-folded, invisible characters removed (`foldText`), then every separator dropped, so
 * `D-E-8-9 3704`, `ｄｅ８９３７０４` and `DE893704` are one value. Used by `deriveProvenance`
 * (README, Memory: provenance): a write that carries a value a tool supplied is the tool's,
 * whatever words surround it. Every scan here is linear in its input.
 */

/** Everything that is not a letter or a digit: what a compact form drops. */
const NON_ALNUM = /[^\p{L}\p{N}]+/gu;
const DIGIT = /\p{N}/gu;
const WHITESPACE = /\s+/u;
/** Characters a number or code may hold between its letters and digits: `1,250.00`, `DE89-3704`. */
const CODE_CHARS = /^[\p{L}\p{N}\-./,:'_+#]+$/u;

/** A compact form at least this long is looked for anywhere in tool output; a shorter one must stand alone. */
export const MIN_EMBEDDED_LENGTH = 6;
/** Longer values are compared on their first this-many characters, which keeps matching linear. */
const MAX_COMPARED_LENGTH = 64;
/** A run of codes counts when it holds at least this many digits (`€250`, a year, an account). */
const MIN_DIGITS = 3;

/** `text` with case, width, invisibles and every separator removed. */
export function compactForm(text: string): string {
  return foldText(text).replace(NON_ALNUM, '');
}

/**
 * The compact forms of the high-value values in `text`: e-mail addresses and URLs (one
 * whitespace-separated chunk each), and runs of consecutive number-like chunks (`DE89 3704
 * 0044`, `1,250.00`) holding at least {@link MIN_DIGITS} digits.
 */
export function highValueTokens(text: string): string[] {
  const tokens: string[] = [];
  let run = '';
  const flush = () => {
    if ((run.match(DIGIT)?.length ?? 0) >= MIN_DIGITS) tokens.push(run);
    run = '';
  };
  for (const chunk of foldText(text).split(WHITESPACE)) {
    const core = trimToAlphanumeric(chunk);
    if (core === '') continue; // a lone "-" or "/" between groups does not end a run
    if (isAddress(core)) {
      flush();
      const compact = core.replace(NON_ALNUM, '');
      if (compact.length >= MIN_EMBEDDED_LENGTH) tokens.push(compact);
    } else if (CODE_CHARS.test(core) && /\p{N}/u.test(core)) {
      run += core.replace(NON_ALNUM, '');
    } else {
      flush();
    }
  }
  flush();
  return tokens.map((token) => token.slice(0, MAX_COMPARED_LENGTH));
}

/** What tool output offers for comparison: its compact text and its own values. */
export interface ToolValues {
  /** The compact form of each tool output, joined by `|` (never part of a compact form). */
  compact: string;
  /** The compact forms of the values found in tool output, for short values. */
  values: ReadonlySet<string>;
}

/** Prepares tool outputs for {@link carriesToolValue}. */
export function toolValues(outputs: readonly string[]): ToolValues {
  return {
    compact: outputs.map(compactForm).join('|'),
    values: new Set(outputs.flatMap(highValueTokens)),
  };
}

/**
 * Whether `texts` carry a high-value value that tool output holds: a long one anywhere in the
 * compact tool text (so `P A Y O U T S @ E V I L . E X A M P L E` is found), a short one
 * (`250`) only as a value of its own, so that `250` is not found inside `12505`.
 */
export function carriesToolValue(texts: readonly string[], tools: ToolValues): boolean {
  if (tools.compact === '') return false;
  for (const token of texts.flatMap(highValueTokens)) {
    if (
      token.length >= MIN_EMBEDDED_LENGTH ? tools.compact.includes(token) : tools.values.has(token)
    ) {
      return true;
    }
  }
  return false;
}

/** An e-mail address or a URL: compared whole, letters included. */
function isAddress(core: string): boolean {
  const at = core.indexOf('@');
  if (at > 0 && core.indexOf('.', at) > at + 1) return true;
  return core.includes('://') || core.startsWith('www.');
}

/** `chunk` without the punctuation, quotes and currency signs around it. */
function trimToAlphanumeric(chunk: string): string {
  let start = 0;
  let end = chunk.length;
  while (start < end && !isAlphanumeric(chunk[start]!)) start++;
  while (end > start && !isAlphanumeric(chunk[end - 1]!)) end--;
  return chunk.slice(start, end);
}

function isAlphanumeric(char: string): boolean {
  return /[\p{L}\p{N}]/u.test(char);
}
