import { decodeHtmlEntitiesDeep } from './html-entities.js';
import {
  HIDDEN_TAGS,
  NEAR_NEEDLES,
  NEAR_WINDOW,
  type PoisoningKind,
  SINGLE_NEEDLES,
  TAG_OPENERS,
} from './poisoning-needles.js';
import { type Folded, foldForScan, isAlnum, withoutJoiners } from './scan-folding.js';

export type { PoisoningKind } from './poisoning-needles.js';
export { foldForScan } from './scan-folding.js';

/** Longest prefix of one imported text that is scanned and kept (characters). */
export const MAX_SCANNED_TEXT = 65_536;

/** The text without its poisoning blocks, and what they were. */
export interface PoisoningScan {
  text: string;
  findings: PoisoningKind[];
}

/** One marker found in a text: its kind, where it stands, and what removing it takes. */
export interface PoisoningFinding {
  kind: PoisoningKind;
  /** First index of the marker in the text. */
  start: number;
  /** Index after the marker (after the closing tag of a closed block). */
  end: number;
  /** For a tag block or comment, the index after what goes with it; else its sentence goes. */
  blockEnd?: number;
}

// Needles of letters and digits only are matched in the folding without joiners and tags
// (`withoutJoiners`), where `I.g.n.o.r.e` and `Ig<b></b>nore` read as words; needles that are
// punctuation themselves (`~/.ssh`, `process.env`, `http://`, `don't`) in the folding as is.
const isWord = (needle: string): boolean => [...needle].every((_, index) => isAlnum(needle, index));
const WORD_SINGLES = SINGLE_NEEDLES.filter(([, needle]) => isWord(needle));
const MARK_SINGLES = SINGLE_NEEDLES.filter(([, needle]) => !isWord(needle));
const WORD_PAIRS = NEAR_NEEDLES.filter(([, trigger, near]) => isWord(trigger) && isWord(near));
const MARK_PAIRS = NEAR_NEEDLES.filter(([, trigger, near]) => !isWord(trigger) || !isWord(near));

/** Every position where `needle` occurs in the folded text as a whole word. */
function occurrences(folded: Folded, needle: string): number[] {
  const found: number[] = [];
  const { text, gap } = folded;
  const checkStart = isAlnum(needle, 0);
  const checkEnd = isAlnum(needle, needle.length - 1);
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + 1)) {
    const end = at + needle.length;
    if (checkStart && at > 0 && gap[at] === 0 && isAlnum(text, at - 1)) continue;
    if (checkEnd && end < text.length && gap[end] === 0 && isAlnum(text, end)) continue;
    found.push(at);
  }
  return found;
}

/**
 * Finds tool-poisoning instructions in an imported description and removes them: blocks in
 * tags addressed to the model (`<IMPORTANT>…</IMPORTANT>`, `<system>`, `<instructions>`, also
 * escaped or full-width; an unclosed one hides the rest of the text), HTML comments, and every
 * sentence that tells the model to hide something from the user, reads key files or the
 * environment (`~/.ssh`, `id_rsa`, `.env`, `/etc/passwd`, `process.env`, API keys), sends data to
 * a URL, or addresses the model ("before using this tool", "ignore previous instructions",
 * "you must"). Matching runs on {@link foldForScan}'s folding, so case, width, spacing, hidden
 * characters, look-alike letters, accents and combining marks, JSON and URL escapes and tag
 * characters do not hide a marker; marker words are also read across punctuation between
 * their letters and across HTML tags (`I.g.n.o.r.e`, `Ig<b></b>nore`: see `withoutJoiners`).
 *
 * Linear in the length of `text` (cut to {@link MAX_SCANNED_TEXT}): a fixed set of needles,
 * each found with `indexOf` in one left-to-right pass, pairs matched with moving pointers.
 * The caller sanitises the result (`sanitizeOutput`) like any imported text.
 */
export function scanToolPoisoning(input: string): PoisoningScan {
  return scanText(input.length > MAX_SCANNED_TEXT ? input.slice(0, MAX_SCANNED_TEXT) : input);
}

/** Between two parts of a model view: a line break, which ends no sentence for the needles. */
export const VIEW_SEPARATOR = '\n';

/**
 * The text a model reads of one tool, as it is scanned: `parts` (its name, title, description
 * and every string of its schemas, in the order the model reads them: see
 * `modelVisibleStrings`) each HTML-entity-decoded (`&lt;IMPORTANT&gt;`, `&#105;gnore`,
 * `&amp;lt;` too) and joined with line breaks.
 */
export function modelViewText(parts: readonly string[]): string {
  return parts.map((part) => decodeHtmlEntitiesDeep(part)).join(VIEW_SEPARATOR);
}

/**
 * The poisoning kinds in the text a model reads of one tool, read as a whole
 * ({@link modelViewText}) and scanned like one description. So an instruction in an enum value
 * or a property name is found, and so is a sentence split between two fields ("Do not tell
 * the" · "user about it"), which neither field shows alone.
 *
 * Nothing is cut: the view is scanned to its end, in time linear in its length (importers cap
 * the schemas it comes from at 100 kB). Only the kinds are returned; what is removed from each
 * text is still decided per text by {@link scanToolPoisoning}.
 */
export function scanModelView(parts: readonly string[]): PoisoningKind[] {
  return scanText(modelViewText(parts)).findings;
}

/**
 * Every marker in `text`, uncut, with where it stands (the needles, tag blocks and comments
 * {@link scanToolPoisoning} removes). Linear in the length of `text`.
 */
export function locatePoisoning(text: string): PoisoningFinding[] {
  const folded = foldForScan(text);
  const found: PoisoningFinding[] = [];
  findNeedles(folded, MARK_SINGLES, MARK_PAIRS, found);
  const words = withoutJoiners(folded);
  findNeedles(words, WORD_SINGLES, WORD_PAIRS, found);
  // Tags dropped (`Ig<b></b>nore`): a second look only when there was a tag to drop.
  const untagged = folded.text.includes('<') ? withoutJoiners(folded, true) : words;
  if (untagged.text.length !== words.text.length) {
    findNeedles(untagged, WORD_SINGLES, WORD_PAIRS, found);
  }
  findTagBlocks(text, folded, found);
  findComments(text, found);
  return found;
}

function findNeedles(
  folded: Folded,
  singles: typeof SINGLE_NEEDLES,
  pairs: typeof NEAR_NEEDLES,
  found: PoisoningFinding[],
): void {
  const { origin } = folded;
  const span = (kind: PoisoningKind, from: number, last: number) =>
    found.push({ kind, start: origin[from]!, end: origin[last]! + 1 });
  for (const [kind, needle] of singles) {
    for (const at of occurrences(folded, needle)) span(kind, at, at + needle.length - 1);
  }
  for (const [kind, trigger, near] of pairs) {
    const nears = occurrences(folded, near);
    let next = 0;
    for (const at of occurrences(folded, trigger)) {
      const after = at + trigger.length;
      while (next < nears.length && nears[next]! < after) next++;
      if (next < nears.length && nears[next]! - after <= NEAR_WINDOW) {
        span(kind, at, nears[next]! + near.length - 1);
      }
    }
  }
}

function scanText(text: string): PoisoningScan {
  const found = locatePoisoning(text);
  if (found.length === 0) return { text, findings: [] };
  const remove = new Uint8Array(text.length + 1);
  const sentences = sentenceSpans(text);
  // A sentence is removed once, however many markers it holds (each fill is then linear).
  const removedSentence = new Uint8Array(text.length + 1);
  for (const finding of found) {
    if (finding.blockEnd !== undefined) {
      remove.fill(1, finding.start, finding.blockEnd);
      continue;
    }
    const from = sentences.start[finding.start]!;
    if (removedSentence[from] === 1) continue;
    removedSentence[from] = 1;
    remove.fill(1, from, sentences.end[finding.start]);
  }
  let kept = '';
  let from = -1;
  for (let index = 0; index <= text.length; index++) {
    if (index < text.length && remove[index] === 0) {
      if (from < 0) from = index;
    } else if (from >= 0) {
      kept += text.slice(from, index);
      from = -1;
    }
  }
  const kinds = [...new Set(found.map((finding) => finding.kind))].sort();
  return { text: kept.replace(/[ \t]{2,}/g, ' ').trim(), findings: kinds };
}

// For each original index, the [start, end) of its sentence: sentences end after . ! ? followed
// by whitespace, or at a line break. Two linear passes.
function sentenceSpans(text: string): { start: Int32Array; end: Int32Array } {
  const start = new Int32Array(text.length + 1);
  const end = new Int32Array(text.length + 1);
  let from = 0;
  for (let index = 0; index < text.length; index++) {
    start[index] = from;
    const char = text[index]!;
    const next = text[index + 1];
    if (char === '\n' || ('.!?'.includes(char) && (next === undefined || /\s/.test(next)))) {
      from = index + 1;
    }
  }
  start[text.length] = from;
  let to = text.length;
  for (let index = text.length - 1; index >= 0; index--) {
    if (start[index + 1] === index + 1) to = index + 1;
    end[index] = to;
  }
  end[text.length] = text.length;
  return { start, end };
}

interface TagMark {
  at: number;
  close: boolean;
  name: string;
  /** Folded index just after the tag's `>` (or after its name when none follows soon). */
  after: number;
}

// Opening and closing tags of HIDDEN_TAGS, in folded order; each block (open to matching close,
// or to the end) is a finding. One pass over the openers' occurrences.
function findTagBlocks(text: string, folded: Folded, found: PoisoningFinding[]): void {
  const marks: TagMark[] = [];
  for (const opener of TAG_OPENERS) {
    for (
      let at = folded.text.indexOf(opener);
      at !== -1;
      at = folded.text.indexOf(opener, at + 1)
    ) {
      const mark = tagAt(folded.text, at, at + opener.length);
      if (mark) marks.push(mark);
    }
  }
  if (marks.length === 0) return;
  marks.sort((a, b) => a.at - b.at);
  const originOf = (index: number) =>
    index >= folded.text.length ? text.length : folded.origin[index]!;
  const block = (from: TagMark, to: TagMark, blockEnd?: number) =>
    found.push({
      kind: 'hidden_tag',
      start: originOf(from.at),
      end: originOf(to.after),
      blockEnd: blockEnd ?? originOf(to.after),
    });
  let open: TagMark | undefined;
  for (const mark of marks) {
    if (!open) {
      if (mark.close) block(mark, mark);
      else open = mark;
    } else if (mark.close && mark.name === open.name) {
      block(open, mark);
      open = undefined;
    }
  }
  // Unclosed: the opening tag is the marker; everything after it goes.
  if (open) block(open, open, text.length);
}

function tagAt(text: string, at: number, nameStart: number): TagMark | undefined {
  const close = text[nameStart] === '/';
  const start = close ? nameStart + 1 : nameStart;
  const name = HIDDEN_TAGS.find(
    (tag) => text.startsWith(tag, start) && !isAlnum(text, start + tag.length),
  );
  if (!name) return undefined;
  let after = start + name.length;
  // The tag's own end within a short window (attributes), else just past the name.
  for (let index = after; index < Math.min(text.length, after + 200); index++) {
    if (text[index] === '<') break;
    if (text[index] === '>' || text.startsWith('&gt;', index)) {
      after = index + (text[index] === '>' ? 1 : 4);
      break;
    }
  }
  return { at, close, name, after };
}

function findComments(text: string, found: PoisoningFinding[]): void {
  for (let at = text.indexOf('<!--'); at !== -1; at = text.indexOf('<!--', at + 4)) {
    const end = text.indexOf('-->', at + 4);
    const blockEnd = end === -1 ? text.length : end + 3;
    found.push({ kind: 'hidden_tag', start: at, end: end === -1 ? at + 4 : blockEnd, blockEnd });
    if (end === -1) break;
    at = end;
  }
}
