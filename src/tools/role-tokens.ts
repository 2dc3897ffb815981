/**
 * Role-impersonation text in tool output: what a model (or its chat template) could read as
 * the start of another turn or the end of the tool result. Every name matched comes from the
 * one table in model-markers.ts. Found in one left-to-right scan, in any case, in full-width
 * letters and brackets, with blanks inside the delimiters, and neutralised by rewriting
 * delimiters only:
 *
 * - `chat_template_token`: `<|im_start|>`, DeepSeek's `<｜…｜>`, also with full-width or small
 *   angle brackets and JSON/JS escapes (`\u003c|…|\u003e`): both brackets become `&lt;`/`&gt;`.
 * - `instruction_marker`: `[INST]`, `[ /INST ]`, `［SYSTEM_PROMPT］`: the brackets become
 *   parentheses; `<<SYS>>`, `<</SYS>>`: every bracket escaped.
 * - `tool_tag`: `</tool_result>`, `<function_calls>`, `<start_of_turn>`, …: the `<` (and the
 *   tag's `>`) escaped.
 * - `turn_header`: a line that opens a fake turn (`System:`, `### Assistant:`, `"System":`,
 *   also with look-alike letters such as `Syѕtem:`, spaced out as `A s s i s t a n t:`
 *   (role-word.ts) and after a JSON-escaped newline):
 *   `(quoted) ` is written before it.
 *
 * Why one pass is enough (the result is a fixed point): a rewrite only ever replaces an
 * opening or closing delimiter with text containing `&`, `(`, `)` or a letter; no pattern can
 * start at those, and the bodies of chat tokens may not contain `&`, `\` or `[`, so escaping
 * an inner token never completes an outer one (`<|<<SYS>>|>` stays neutral; an instruction
 * marker inside a token body, whose `[` becomes `(`, is read as the next pass reads it:
 * `<|[INST]|>` is escaped as a token at once), nor does a credential redacted later.
 * Linear: each pattern reads a bounded window (chat token bodies ≤ 64, tag tails ≤ 200
 * characters, stopping at the next `<`; blanks ≤ 8) or a run no other attempt reads again.
 */

import { lowerAscii } from '../audit/credential-text.js';
import { TextEdits } from '../audit/text-edits.js';
import { markerNames, type RolePatternName } from './model-markers.js';
import { readRoleWord } from './role-word.js';

export type { RolePatternName } from './model-markers.js';

/** The neutralised text and how often each pattern was found. */
export interface RoleNeutralisation {
  text: string;
  counts: Map<RolePatternName, number>;
}

// Every name below comes from the one table of markers (model-markers.ts).
const MARKER_NAMES = markerNames('square_marker');
const MARKER_LENGTHS = new Set(MARKER_NAMES.map((name) => name.length));
const LONGEST_MARKER = Math.max(...MARKER_LENGTHS);
const DOUBLE_ANGLE_NAMES = markerNames('double_angle');
const TAG_NAMES = markerNames('tag');
const TAG_PREFIXES = markerNames('tag_prefix');
// One bit per first letter of a tag name or prefix (all lower-case ASCII).
const TAG_INITIALS = [...TAG_NAMES, ...TAG_PREFIXES].reduce(
  (bits, name) => bits | (1 << (name.charCodeAt(0) - 97)),
  0,
);

/** True when `text[start, end)` is a tag name or starts with a tag prefix, in any case. */
function isTagName(text: string, start: number, end: number): boolean {
  const initial = foldCode(text.charCodeAt(start)) - 97;
  if (initial < 0 || initial > 25 || (TAG_INITIALS & (1 << initial)) === 0) return false;
  for (const name of TAG_NAMES) if (equalsFolded(text, start, end, name)) return true;
  for (const prefix of TAG_PREFIXES) if (startsFolded(text, start, end, prefix)) return true;
  return false;
}
const ROLES = new Set(markerNames('header', 'quoted_header'));
// After a quote (a JSON key), only the roles no ordinary JSON key is called.
const QUOTED_ROLES = new Set(markerNames('quoted_header'));
// First letters of the role words, either case (an ASCII letter that is none of them ends the check).
const ROLE_INITIALS = new Set(
  [...ROLES].flatMap((role) => [role.charCodeAt(0), role.toUpperCase().charCodeAt(0)]),
);
const isRoleInitial = (code: number): boolean => ROLE_INITIALS.has(code);
// Characters that may stand before a fake role word (list marks, emphasis, quotes) and after
// it, as a table by code unit (all ASCII): a header check runs at every line start.
const HEADER_LEAD = 1;
const HEADER_TRAIL = 2;
const HEADER_CHARS = new Uint8Array(128);
for (const char of ' \t>#*_-"\'`[(|\\') HEADER_CHARS[char.charCodeAt(0)]! |= HEADER_LEAD;
for (const char of '*_"\'`])|\\') HEADER_CHARS[char.charCodeAt(0)]! |= HEADER_TRAIL;
const isHeaderChar = (code: number, kind: number): boolean =>
  code < 128 && (HEADER_CHARS[code]! & kind) !== 0;

/**
 * The code unit as the matchers compare it: a full-width ASCII form (U+FF01–U+FF5E) read as
 * ASCII, then only letters case-folded ({@link lowerAscii}; OR-ing 0x20 into every code unit,
 * as this once did, made `<start_of_turn>` and `[SYSTEM_PROMPT]` unmatchable).
 */
const foldCode = (code: number): number =>
  lowerAscii(code >= 0xff01 && code <= 0xff5e ? code - 0xfee0 : code);

// Blanks allowed after an opening and before a closing delimiter (`[ INST ]`, `< /tool>`):
// at most this many, so every look stays bounded.
const MAX_BLANKS = 8;

/** Index after at most {@link MAX_BLANKS} spaces or tabs (ASCII or ideographic) from `index`. */
function skipBlanks(text: string, index: number): number {
  let end = index;
  while (end - index < MAX_BLANKS) {
    const code = text.charCodeAt(end);
    if (code !== 32 && code !== 9 && code !== 0x3000) break;
    end++;
  }
  return end;
}

// `\u003c` / `\x3c` (or `\u003e` / `\x3e` when `last` is "e"): its length at `index`, or 0.
function escapedBracket(text: string, index: number, last: number): number {
  const kind = lowerAscii(text.charCodeAt(index + 1));
  if (kind === 117 /* u */) {
    return text.charCodeAt(index + 2) === 48 &&
      text.charCodeAt(index + 3) === 48 &&
      text.charCodeAt(index + 4) === 51 &&
      lowerAscii(text.charCodeAt(index + 5)) === last
      ? 6
      : 0;
  }
  return kind === 120 /* x */ &&
    text.charCodeAt(index + 2) === 51 &&
    lowerAscii(text.charCodeAt(index + 3)) === last
    ? 4
    : 0;
}

/** An opening angle bracket at `index` (also escaped as `\u003c` / `\x3c`): its length, or 0. */
function opener(text: string, index: number): number {
  const code = text.charCodeAt(index);
  if (code === 60 || code === 0xff1c || code === 0xfe64) return 1;
  return code === 92 ? escapedBracket(text, index, 99 /* c */) : 0;
}

function closer(text: string, index: number): number {
  const code = text.charCodeAt(index);
  if (code === 62 || code === 0xff1e || code === 0xfe65) return 1;
  return code === 92 ? escapedBracket(text, index, 101 /* e */) : 0;
}

const isPipe = (code: number): boolean =>
  code === 124 ||
  code === 0xff5c ||
  code === 0xffe8 ||
  code === 0x2223 ||
  code === 0x01c0 ||
  code === 0x2502;

// Chat-token bodies may not contain angle brackets, newline, "&" (our own escapes), "\" or
// "[" (a redaction marker, which the body of a real special token never holds).
const isBodyStop = (code: number): boolean =>
  code === 91 ||
  code === 60 ||
  code === 62 ||
  code === 10 ||
  code === 38 ||
  code === 92 ||
  code === 0xff1c ||
  code === 0xff1e ||
  code === 0xfe64 ||
  code === 0xfe65;

/** True when `text[start, end)` equals the lower-case ASCII `word` in any case and width. */
function equalsFolded(text: string, start: number, end: number, word: string): boolean {
  if (end - start !== word.length) return false;
  for (let offset = 0; offset < word.length; offset++) {
    if (foldCode(text.charCodeAt(start + offset)) !== word.charCodeAt(offset)) return false;
  }
  return true;
}

function startsFolded(text: string, start: number, end: number, word: string): boolean {
  return end - start >= word.length && equalsFolded(text, start, start + word.length, word);
}

// [A-Za-z0-9_-], in either width
const isNameChar = (unit: number): boolean => {
  const code = foldCode(unit);
  return (code >= 97 && code <= 122) || (code >= 48 && code <= 57) || code === 95 || code === 45;
};

// "/", in either width
const isSlash = (code: number): boolean => code === 47 || code === 0xff0f;

/**
 * Where the closing bracket of an instruction marker (`[INST]`, `[ /INST ]`, `［SYSTEM_PROMPT］`,
 * …) opening at `at` is, or -1 when none opens there. Reads a bounded window: the longest
 * name, a slash and two runs of at most {@link MAX_BLANKS} blanks.
 */
function markerClose(text: string, at: number): number {
  let index = skipBlanks(text, at + 1);
  if (isSlash(text.charCodeAt(index))) index = skipBlanks(text, index + 1);
  const nameStart = index;
  while (
    index < text.length &&
    index - nameStart <= LONGEST_MARKER &&
    isNameChar(text.charCodeAt(index))
  ) {
    index++;
  }
  if (!MARKER_LENGTHS.has(index - nameStart)) return -1;
  if (!MARKER_NAMES.some((name) => equalsFolded(text, nameStart, index, name))) return -1;
  index = skipBlanks(text, index);
  const close = text.charCodeAt(index);
  return close === 93 || close === 0xff3d ? index : -1;
}

/** Rewrites role-impersonation text as described above; see the module comment. */
export function neutraliseRoleTokens(text: string): RoleNeutralisation {
  const scan = new RoleScan(text);
  scan.turnHeader(0);
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    // Only these code units can start a pattern (line breaks, "<", "[", "\\" and their
    // full-width and escaped forms); any other ASCII character costs a few comparisons.
    if (
      code < 60
        ? code !== 10 && code !== 13
        : code < 128 && code !== 60 && code !== 91 && code !== 92
    )
      continue;
    if (code === 10 || code === 13 || code === 0x2028 || code === 0x2029) {
      scan.turnHeader(index + 1);
    } else if (code === 92) {
      const next = text.charCodeAt(index + 1);
      if (next === 110 || next === 114) scan.turnHeader(index + 2); // \n, \r in JSON text
      const open = opener(text, index);
      if (open > 0) {
        scan.chatToken(index, open) || scan.tag(index, open) || scan.sysMarker(index, open);
      }
    } else if (code === 60 || code === 0xff1c || code === 0xfe64) {
      scan.chatToken(index, 1) || scan.tag(index, 1) || scan.sysMarker(index, 1);
    } else if (code === 91 || code === 0xff3b) {
      scan.instructionMarker(index);
    }
  }
  return scan.result();
}

/**
 * One neutralising pass: the edits so far and what was found. A class rather than closures in
 * `neutraliseRoleTokens`, so a call allocates one object however many patterns it checks.
 */
class RoleScan {
  readonly text: string;
  readonly #edits = new TextEdits();
  // Counted in a plain record (a map update per match showed in profiles); reported in the
  // order first found.
  readonly #tally: Record<RolePatternName, number> = {
    chat_template_token: 0,
    instruction_marker: 0,
    tool_tag: 0,
    turn_header: 0,
  };
  readonly #firstFound: RolePatternName[] = [];

  constructor(text: string) {
    this.text = text;
  }

  result(): RoleNeutralisation {
    const counts = new Map(this.#firstFound.map((name) => [name, this.#tally[name]] as const));
    return { text: this.#edits.apply(this.text), counts };
  }

  #rewrite(at: number, length: number, replacement: string): void {
    this.#edits.add(at, length, replacement);
  }

  #found(name: RolePatternName): void {
    if (this.#tally[name]++ === 0) this.#firstFound.push(name);
  }

  chatToken(at: number, open: number): boolean {
    const { text } = this;
    if (!isPipe(text.charCodeAt(at + open))) return false;
    const bodyStart = at + open + 1;
    for (let index = bodyStart; index < text.length && index <= bodyStart + 64; index++) {
      const code = text.charCodeAt(index);
      if (isPipe(code) && index > bodyStart) {
        const close = closer(text, index + 1);
        if (close > 0) {
          this.#rewrite(at, open, '&lt;');
          this.#rewrite(index + 1, close, '&gt;');
          this.#found('chat_template_token');
          return true;
        }
      }
      // An instruction marker inside is no stop: it becomes "(INST)", and the token must be
      // judged as the next pass would see it, or a second pass would escape it.
      if (code === 91) {
        const markerEnd = markerClose(text, index);
        if (markerEnd > 0) {
          index = markerEnd;
          continue;
        }
      }
      if (isBodyStop(code)) return false;
    }
    return false;
  }

  tag(at: number, open: number): boolean {
    const { text } = this;
    let index = skipBlanks(text, at + open);
    if (isSlash(text.charCodeAt(index))) index++;
    while (
      text.charCodeAt(index) === 32 ||
      text.charCodeAt(index) === 9 ||
      text.charCodeAt(index) === 10 ||
      text.charCodeAt(index) === 0x3000
    ) {
      index++;
    }
    if (startsFolded(text, index, index + 6, 'antml:')) index += 6;
    const nameStart = index;
    while (index < text.length && index - nameStart <= 64 && isNameChar(text.charCodeAt(index))) {
      index++;
    }
    if (index - nameStart < 4 || !isTagName(text, nameStart, index)) return false;
    this.#rewrite(at, open, '&lt;');
    // The tag's own ">" within 200 characters, unless another tag opens first.
    for (let end = index; end < text.length && end <= index + 200; end++) {
      const close = closer(text, end);
      if (close > 0) {
        this.#rewrite(end, close, '&gt;');
        break;
      }
      if (opener(text, end) > 0) break;
    }
    this.#found('tool_tag');
    return true;
  }

  /** `<<SYS>>`, `<</SYS>>` (any width, escaped, blanks inside): every bracket escaped. */
  sysMarker(at: number, open: number): boolean {
    const { text } = this;
    const second = opener(text, at + open);
    if (second === 0) return false;
    let index = skipBlanks(text, at + open + second);
    if (isSlash(text.charCodeAt(index))) index = skipBlanks(text, index + 1);
    const name = DOUBLE_ANGLE_NAMES.find((word) =>
      equalsFolded(text, index, index + word.length, word),
    );
    if (name === undefined) return false;
    const close = skipBlanks(text, index + name.length);
    const first = closer(text, close);
    const last = first === 0 ? 0 : closer(text, close + first);
    if (last === 0) return false;
    this.#rewrite(at, open, '&lt;');
    this.#rewrite(at + open, second, '&lt;');
    this.#rewrite(close, first, '&gt;');
    this.#rewrite(close + first, last, '&gt;');
    this.#found('instruction_marker');
    return true;
  }

  instructionMarker(at: number): void {
    const close = markerClose(this.text, at);
    if (close < 0) return;
    this.#rewrite(at, 1, '(');
    this.#rewrite(close, 1, ')');
    this.#found('instruction_marker');
  }

  turnHeader(start: number): void {
    const { text } = this;
    let index = start;
    let code = text.charCodeAt(index);
    while (code === 32 || code === 9) code = text.charCodeAt(++index);
    const insertAt = index;
    let quoted = false;
    while (isHeaderChar(code, HEADER_LEAD)) {
      if (code === 34 || code === 39 || code === 96) quoted = true; // " ' `
      code = text.charCodeAt(++index);
    }
    // Most lines start with a letter that begins no role word: one comparison, no string.
    if (code < 128 && !isRoleInitial(code)) return;
    const word = readRoleWord(text, index);
    index = word.end;
    if (!(quoted ? QUOTED_ROLES : ROLES).has(word.role)) return;
    while (isHeaderChar(text.charCodeAt(index), HEADER_TRAIL)) index++;
    code = text.charCodeAt(index);
    while (code === 32 || code === 9) code = text.charCodeAt(++index);
    if (code !== 58 && code !== 0xff1a) return; // : or ：
    this.#rewrite(insertAt, 0, '(quoted) ');
    this.#found('turn_header');
  }
}
