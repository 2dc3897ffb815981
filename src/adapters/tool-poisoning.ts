import { prototypeOf } from '../identity/skeleton.js';
import { isHiddenCodePoint } from '../tools/hidden-characters.js';
import { decodeHtmlEntitiesDeep } from './html-entities.js';
import {
  HIDDEN_TAGS,
  NEAR_NEEDLES,
  NEAR_WINDOW,
  type PoisoningKind,
  SINGLE_NEEDLES,
  TAG_OPENERS,
} from './poisoning-needles.js';

export type { PoisoningKind } from './poisoning-needles.js';

/** Longest prefix of one imported text that is scanned and kept (characters). */
export const MAX_SCANNED_TEXT = 65_536;

/** The text without its poisoning blocks, and what they were. */
export interface PoisoningScan {
  text: string;
  findings: PoisoningKind[];
}

/** A text folded for matching, with where each folded unit came from in the original. */
interface Folded {
  text: string;
  /** Original index of each folded code unit. */
  origin: Int32Array;
  /** 1 where a separator (space, `_`, `-`, `*`, backtick) or a hidden character preceded. */
  gap: Uint8Array;
}

const SEPARATORS = new Set([' ', '\t', '\n', '\r', '\f', '\v', '_', '-', '*', '`']);

/**
 * Folds `text` for matching, one code point at a time (linear): hidden and control characters
 * dropped, separators dropped (remembered as a gap), ASCII lower-cased, anything else NFKC'd,
 * lower-cased and mapped to its `confusables.txt` prototype (`ＩＭＰＯＲＴＡＮＴ`, `Іmportant`
 * with a Cyrillic І, `i m p o r t a n t` and `IMPOR\u200bTANT` all fold to `important`).
 */
export function foldForScan(text: string): Folded {
  const units: string[] = [];
  const origin: number[] = [];
  const gap: number[] = [];
  let pendingGap = true;
  for (let index = 0; index < text.length; ) {
    const codePoint = text.codePointAt(index)!;
    const width = codePoint > 0xffff ? 2 : 1;
    const char = text.slice(index, index + width);
    let mapped: string;
    if (codePoint < 0x80) mapped = char.toLowerCase();
    else if (isHiddenCodePoint(codePoint) || (codePoint >= 0x80 && codePoint <= 0x9f)) mapped = '';
    else mapped = foldNonAscii(char);
    for (const unit of mapped) {
      if (SEPARATORS.has(unit) || unit.trim() === '') {
        pendingGap = true;
        continue;
      }
      if (unit.charCodeAt(0) < 0x20) continue;
      units.push(unit);
      origin.push(index);
      gap.push(pendingGap ? 1 : 0);
      pendingGap = false;
    }
    if (mapped === '' && codePoint < 0x20) pendingGap = true;
    index += width;
  }
  return { text: units.join(''), origin: Int32Array.from(origin), gap: Uint8Array.from(gap) };
}

function foldNonAscii(char: string): string {
  let result = '';
  for (const unit of char.normalize('NFKC').toLowerCase()) {
    result += unit.charCodeAt(0) < 0x80 ? unit : (prototypeOf(unit) ?? unit).toLowerCase();
  }
  return result;
}

const isAlnum = (text: string, index: number): boolean => {
  const code = text.charCodeAt(index);
  return (code >= 97 && code <= 122) || (code >= 48 && code <= 57);
};

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
 * characters and look-alike letters do not hide a marker.
 *
 * Linear in the length of `text` (cut to {@link MAX_SCANNED_TEXT}): a fixed set of needles,
 * each found with `indexOf` in one left-to-right pass, pairs matched with moving pointers.
 * The caller sanitises the result (`sanitizeOutput`) like any imported text.
 */
export function scanToolPoisoning(input: string): PoisoningScan {
  return scanText(input.length > MAX_SCANNED_TEXT ? input.slice(0, MAX_SCANNED_TEXT) : input);
}

/** Between two parts of a model view: a line break, which ends no sentence for the needles. */
const VIEW_SEPARATOR = '\n';

/**
 * The poisoning kinds in the text a model reads of one tool, read as a whole: `parts` (its
 * name, title, description and every string of its schemas, in the order the model reads
 * them: see `modelVisibleStrings`) each HTML-entity-decoded (`&lt;IMPORTANT&gt;`, `&#105;gnore`,
 * `&amp;lt;` too), then joined with line breaks and scanned like one description. So an
 * instruction in an enum value or a property name is found, and so is a sentence split between
 * two fields ("Do not tell the" · "user about it"), which neither field shows alone.
 *
 * Nothing is cut: the view is scanned to its end, in time linear in its length (importers cap
 * the schemas it comes from at 100 kB). Only the kinds are returned; what is removed from each
 * text is still decided per text by {@link scanToolPoisoning}.
 */
export function scanModelView(parts: readonly string[]): PoisoningKind[] {
  return scanText(parts.map((part) => decodeHtmlEntitiesDeep(part)).join(VIEW_SEPARATOR)).findings;
}

function scanText(text: string): PoisoningScan {
  const folded = foldForScan(text);
  const remove = new Uint8Array(text.length + 1);
  const findings = new Set<PoisoningKind>();
  const sentences = sentenceSpans(text);
  const flagSentence = (kind: PoisoningKind, foldedIndex: number) => {
    findings.add(kind);
    const original = folded.origin[foldedIndex]!;
    remove.fill(1, sentences.start[original], sentences.end[original]);
  };
  for (const [kind, needle] of SINGLE_NEEDLES) {
    for (const at of occurrences(folded, needle)) flagSentence(kind, at);
  }
  for (const [kind, trigger, near] of NEAR_NEEDLES) {
    const nears = occurrences(folded, near);
    let next = 0;
    for (const at of occurrences(folded, trigger)) {
      const after = at + trigger.length;
      while (next < nears.length && nears[next]! < after) next++;
      if (next < nears.length && nears[next]! - after <= NEAR_WINDOW) flagSentence(kind, at);
    }
  }
  if (removeTagBlocks(text, folded, remove)) findings.add('hidden_tag');
  if (removeComments(text, remove)) findings.add('hidden_tag');
  if (findings.size === 0) return { text, findings: [] };
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
  return { text: kept.replace(/[ \t]{2,}/g, ' ').trim(), findings: [...findings].sort() };
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
// or to the end) is removed. One pass over the openers' occurrences.
function removeTagBlocks(text: string, folded: Folded, remove: Uint8Array): boolean {
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
  if (marks.length === 0) return false;
  marks.sort((a, b) => a.at - b.at);
  let open: TagMark | undefined;
  const originOf = (index: number) =>
    index >= folded.text.length ? text.length : folded.origin[index]!;
  for (const mark of marks) {
    if (!open) {
      if (mark.close) remove.fill(1, originOf(mark.at), originOf(mark.after));
      else open = mark;
    } else if (mark.close && mark.name === open.name) {
      remove.fill(1, originOf(open.at), originOf(mark.after));
      open = undefined;
    }
  }
  if (open) remove.fill(1, originOf(open.at), text.length);
  return true;
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
    if (
      text[index] === '>' ||
      text.startsWith('&gt;', index) ||
      text.startsWith('\\u003e', index)
    ) {
      after = index + (text[index] === '>' ? 1 : text[index] === '&' ? 4 : 6);
      break;
    }
  }
  return { at, close, name, after };
}

function removeComments(text: string, remove: Uint8Array): boolean {
  let found = false;
  for (let at = text.indexOf('<!--'); at !== -1; at = text.indexOf('<!--', at + 4)) {
    found = true;
    const end = text.indexOf('-->', at + 4);
    remove.fill(1, at, end === -1 ? text.length : end + 3);
    if (end === -1) break;
    at = end;
  }
  return found;
}
