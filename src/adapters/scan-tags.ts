import { HIDDEN_TAGS, type PoisoningFinding, TAG_OPENERS } from './poisoning-needles.js';
import { type Folded, isAlnum } from './scan-folding.js';

/** Longest tag name read (folded units) and longest tag (its `>` is looked for that far). */
const MAX_NAME = 64;
const MAX_TAG = 200;

interface TagMark {
  /** Folded index of the opener (`<`, `&lt;`). */
  at: number;
  close: boolean;
  /** The name's first word (`div`, `important`). */
  element: string;
  /** The model-addressed name it begins with (`important` of `<IMPORTANT_NOTE>`), if any. */
  model: string | undefined;
  /** An opening tag whose attributes hide it from a rendered view (`hidden`, `display:none`). */
  hides: boolean;
  /** Folded index just after the tag's `>` (or after its name when none follows soon). */
  after: number;
  /** A bare opening model tag used as a word of its sentence (see {@link isPlaceholder}). */
  placeholder: boolean;
}

/**
 * The tag blocks of a text, each a `hidden_tag` finding from its opening tag to its matching
 * closing tag, or to the end of the text when it is never closed (everything after it goes;
 * an unclosed placeholder, `the <system> settings`, only holds: see `isPlaceholder`):
 *
 * - blocks addressed to the model: a tag whose name begins with a {@link HIDDEN_TAGS} name as
 *   a whole word — `<IMPORTANT>`, `<IMPORTANT class="x">`, `<IMPORTANT_NOTE>`,
 *   `<system-reminder>`, `<hidden_instructions>`, `<IMPORTANT NOTE>`, `<I.M.P.O.R.T.A.N.T>`
 *   (a name is read across blanks, `_`, `-` and punctuation between its letters, so the
 *   word it starts with is found however it is joined to the next);
 * - elements hidden from a rendered view, as a comment is (`style="display:none"`,
 *   `visibility:hidden`, `font-size:0`, `opacity:0`, the `hidden` attribute), to their
 *   matching closing tag (nested elements of the same name counted).
 *
 * Read in `folded` (see `foldForScan`: `〈IMPORTANT〉`, `＜system＞`, `%3Csystem%3E` and the
 * small capitals of `<ɪᴍᴘᴏʀᴛᴀɴᴛ>` are tags too). Linear: each opener is read for at most
 * {@link MAX_TAG} units, and the blocks are matched in one pass over the openers.
 */
export function findTagBlocks(text: string, folded: Folded, found: PoisoningFinding[]): void {
  const marks: TagMark[] = [];
  for (const opener of TAG_OPENERS) {
    for (
      let at = folded.text.indexOf(opener);
      at !== -1;
      at = folded.text.indexOf(opener, at + 1)
    ) {
      const mark = tagAt(folded, text, at, at + opener.length);
      if (mark) marks.push(mark);
    }
  }
  if (marks.length === 0) return;
  marks.sort((a, b) => a.at - b.at);
  const originOf = (index: number) =>
    index >= folded.text.length ? text.length : folded.origin[index]!;
  const block: Block = (from, to, toEnd = false) =>
    found.push({
      kind: 'hidden_tag',
      start: originOf(from.at),
      end: originOf(to.after),
      blockEnd: toEnd ? text.length : originOf(to.after),
    });
  const hold = (mark: TagMark) =>
    found.push({
      kind: 'hidden_tag',
      start: originOf(mark.at),
      end: originOf(mark.after),
      holdOnly: true,
    });
  modelBlocks(marks, block, hold);
  hiddenElements(marks, block);
}

/** Records the block from `from` to `to`; with `toEnd`, what it removes runs to the end. */
type Block = (from: TagMark, to: TagMark, toEnd?: boolean) => void;

// A model-addressed tag opens a block its closing namesake ends; a stray closing tag is one.
// A placeholder opens one only when a closing namesake follows it; else it is held, uncut.
function modelBlocks(marks: readonly TagMark[], block: Block, hold: (mark: TagMark) => void): void {
  const lastClose = new Map<string, number>();
  for (const [index, mark] of marks.entries()) {
    if (mark.close && mark.model !== undefined) lastClose.set(mark.model, index);
  }
  let open: TagMark | undefined;
  for (const [index, mark] of marks.entries()) {
    if (mark.model === undefined) continue;
    if (!open) {
      if (mark.close) block(mark, mark);
      else if (!mark.placeholder || (lastClose.get(mark.model) ?? -1) > index) open = mark;
      else hold(mark);
    } else if (mark.close && mark.model === open.model) {
      block(open, mark);
      open = undefined;
    }
  }
  // Unclosed: the opening tag is the marker; everything after it goes.
  if (open) block(open, open, true);
}

// A hidden element runs to the closing tag that balances it (or, unclosed, to the end).
function hiddenElements(marks: readonly TagMark[], block: Block): void {
  let open: TagMark | undefined;
  let depth = 0;
  for (const mark of marks) {
    if (!open) {
      if (mark.hides) {
        open = mark;
        depth = 1;
      }
    } else if (mark.element === open.element) {
      depth += mark.close ? -1 : 1;
      if (depth === 0) {
        block(open, mark);
        open = undefined;
      }
    }
  }
  if (open) block(open, open, true);
}

// Characters that end a tag's name where they stand (the rest are read as joiners inside it).
const NAME_END = new Set(['<', '>', '/', '&', '=', '"', "'"]);

function tagAt(
  folded: Folded,
  original: string,
  at: number,
  nameStart: number,
): TagMark | undefined {
  const { text, gap } = folded;
  const close = text[nameStart] === '/';
  const start = close ? nameStart + 1 : nameStart;
  // The name's letters, read across blanks, `_`, `-` (gaps) and punctuation between two of
  // its letters; each place a word may end there is a boundary (`wordEnds`: folded index).
  let letters = '';
  const boundaries: number[] = [];
  const wordEnds: number[] = [];
  let index = start;
  for (const last = Math.min(text.length, start + MAX_NAME); index < last; index++) {
    if (isAlnum(text, index)) {
      if (letters !== '' && gap[index] === 1) {
        boundaries.push(letters.length);
        wordEnds.push(index);
      }
      letters += text[index];
    } else if (
      letters !== '' &&
      !NAME_END.has(text[index]!) &&
      gap[index] === 0 &&
      isAlnum(text, index + 1) &&
      gap[index + 1] === 0
    ) {
      boundaries.push(letters.length);
      wordEnds.push(index);
    } else {
      break;
    }
  }
  if (letters === '') return undefined;
  boundaries.push(letters.length);
  wordEnds.push(index);
  // After a blank (`< system limit`, a comparison), only a name standing alone is a tag.
  const spaced = gap[start] === 1;
  const model = HIDDEN_TAGS.find((name) =>
    spaced ? letters === name : letters.startsWith(name) && boundaries.includes(name.length),
  );
  // The tag's own end within a short window (attributes), else just past the name.
  let after = index;
  let end = -1;
  for (let scan = index; scan < Math.min(text.length, index + MAX_TAG); scan++) {
    if (text[scan] === '<') break;
    if (text[scan] === '>' || text.startsWith('&gt;', scan)) {
      end = scan;
      after = scan + (text[scan] === '>' ? 1 : 4);
      break;
    }
  }
  const element = letters.slice(0, boundaries[0]);
  const hides = !close && !spaced && end !== -1 && hidesElement(folded, wordEnds[0]!, end);
  const placeholder =
    !close &&
    model !== undefined &&
    letters === model &&
    end === index &&
    isPlaceholder(folded, original, at, after);
  return { at, close, element, model, hides, after, placeholder };
}

// Words before a noun: a bare tag after one of them is that noun ("the <system> settings").
const DETERMINERS = new Set([
  'the',
  'a',
  'an',
  'this',
  'that',
  'these',
  'those',
  'your',
  'our',
  'its',
  'their',
  'each',
  'every',
  'any',
]);

/**
 * Whether the bare tag folded `[at, after)` (a model-addressed name alone, closed by `>` right
 * after it) is a placeholder — a word of its sentence, as API documentation writes a value to
 * fill in ("Updates the <system> settings of a tenant.") — rather than the opening of a block:
 * a determiner stands right before it, and a blank and a word in lower case (in `original`)
 * right after it. A placeholder opens no block unless its closing tag follows: it holds the
 * tool for review (a `holdOnly` finding) without cutting the rest of the description, which a
 * reviewer then reads whole.
 */
function isPlaceholder(folded: Folded, original: string, at: number, after: number): boolean {
  const { text, gap } = folded;
  if (gap[at] !== 1 || after >= text.length || gap[after] !== 1) return false;
  const next = original.charCodeAt(folded.origin[after]!);
  if (next < 0x61 || next > 0x7a) return false;
  let from = at;
  while (from > 0 && at - from < 6 && isAlnum(text, from - 1) && (from === at || gap[from] === 0)) {
    from--;
  }
  return (from === 0 || gap[from] === 1) && DETERMINERS.has(text.slice(from, at));
}

const HIDING_STYLES = ['display:none', 'visibility:hidden', 'fontsize:0', 'opacity:0'];

// Whether the attributes in folded `[from, to)` hide the element: a hiding style (a zero
// font size or opacity, not `0.8em`) or a `hidden` attribute (a word of its own, not the
// value of `type="hidden"`).
function hidesElement(folded: Folded, from: number, to: number): boolean {
  const { text, gap } = folded;
  const attributes = text.slice(from, to);
  for (const style of HIDING_STYLES) {
    for (let at = attributes.indexOf(style); at !== -1; at = attributes.indexOf(style, at + 1)) {
      const next = attributes.charCodeAt(at + style.length);
      const moreDigits = next === 46 || (next >= 48 && next <= 57);
      if (!style.endsWith('0') || !moreDigits) return true;
    }
  }
  for (
    let at = attributes.indexOf('hidden');
    at !== -1;
    at = attributes.indexOf('hidden', at + 1)
  ) {
    const end = from + at + 6;
    if (gap[from + at] === 1 && (end >= to || gap[end] === 1 || !isAlnum(text, end))) return true;
  }
  return false;
}

/**
 * HTML comments (`<!-- … -->`, to the end of the text when unclosed) and markdown comments —
 * link reference definitions no link uses, written as comments (`[//]: # (…)`,
 * `[comment]: <> "…"`), whose title a rendered description never shows — as `hidden_tag`
 * findings. Read in the text as written (the folding drops the `-` of `<!--`). Linear.
 */
export function findComments(text: string, found: PoisoningFinding[]): void {
  for (let at = text.indexOf('<!--'); at !== -1; at = text.indexOf('<!--', at + 4)) {
    const end = text.indexOf('-->', at + 4);
    const blockEnd = end === -1 ? text.length : end + 3;
    found.push({ kind: 'hidden_tag', start: at, end: end === -1 ? at + 4 : blockEnd, blockEnd });
    if (end === -1) break;
    at = end;
  }
  for (let line = 0; line < text.length; ) {
    const lineEnd = text.indexOf('\n', line);
    const end = markdownCommentEnd(text, line, lineEnd === -1 ? text.length : lineEnd);
    if (end > 0) found.push({ kind: 'hidden_tag', start: line, end, blockEnd: end });
    const next = text.indexOf('\n', Math.max(end - 1, line));
    line = next === -1 ? text.length : next + 1;
  }
}

const TITLE_CLOSERS: Readonly<Record<string, string>> = { '(': ')', '"': '"', "'": "'" };

// The end of a markdown comment on the line `[start, lineEnd)` — up to 3 blanks, `[label]:`,
// `#` or `<>`, a title in `(…)`, `"…"` or `'…'` (which may run over lines, not past a blank
// line) — or 0 when the line opens none.
function markdownCommentEnd(text: string, start: number, lineEnd: number): number {
  let index = start;
  while (index < start + 3 && text[index] === ' ') index++;
  if (text[index] !== '[') return 0;
  const label = text.slice(index, lineEnd).indexOf(']:');
  if (label === -1) return 0;
  index += label + 2;
  while (text[index] === ' ' || text[index] === '\t') index++;
  if (text.startsWith('<>', index)) index += 2;
  else if (text[index] === '#') index += 1;
  else return 0;
  while (text[index] === ' ' || text[index] === '\t') index++;
  const closer = TITLE_CLOSERS[text[index] ?? ''];
  if (closer === undefined) return 0;
  for (let scan = index + 1; scan < text.length; scan++) {
    if (text[scan] === closer) return scan + 1;
    if (text[scan] === '\n') {
      // A blank line ends the title, as it ends the paragraph.
      let next = scan + 1;
      while (text[next] === ' ' || text[next] === '\t') next++;
      if (next >= text.length || text[next] === '\n') return scan;
    }
  }
  return text.length;
}
