import type { NeedleAutomaton } from './needle-automaton.js';
import {
  type NEAR_NEEDLES,
  NEAR_NOT_BEFORE,
  NOT_BEFORE,
  PAIR_WINDOW,
  type PoisoningFinding,
  type PoisoningKind,
  type SINGLE_NEEDLES,
} from './poisoning-needles.js';
import { type Folded, isAlnum } from './scan-folding.js';
import { isShape, type Occurrences, shapeOccurrences } from './scan-shapes.js';

/**
 * The needles of one folding of a text: every needle of `automaton` found in one pass over
 * the folding (a near word such as `user` completes hundreds of pairs, and ~500 triggers are
 * looked for), each needle's occurrences checked once, then singles and pairs matched with
 * moving pointers. Linear in the folding's length for a fixed needle table.
 */
export class NeedleIndex {
  private readonly found = new Map<string, Occurrences>();
  private starts: number[][] | undefined;
  private gapsBefore: Int32Array | undefined;

  constructor(
    private readonly folded: Folded,
    private readonly text: string,
    /** For each index of `text`, where its sentence starts (see `pairSentences`). */
    private readonly sentence: Int32Array,
    /** The string needles looked for (shapes are parsed apart); others are found one by one. */
    private readonly automaton?: NeedleAutomaton,
  ) {}

  /** Where `needle` (a string or a shape of `scan-shapes.ts`) occurs, found once. */
  of(needle: string): Occurrences {
    let known = this.found.get(needle);
    if (!known) {
      known = isShape(needle)
        ? shapeOccurrences(needle, this.folded, this.text)
        : occurrences(this.folded, needle, this.startsOf(needle));
      this.found.set(needle, known);
    }
    return known;
  }

  // Where `needle` starts in the folding, from the automaton's one pass; `undefined` for a
  // needle it does not hold.
  private startsOf(needle: string): readonly number[] | undefined {
    const which = this.automaton?.indexOf(needle) ?? -1;
    if (which < 0) return undefined;
    this.starts ??= this.automaton!.starts(this.folded.text);
    return this.starts[which];
  }

  /** Adds the finding of folded units `[from, to)`, placed in the original text. */
  span(found: PoisoningFinding[], kind: PoisoningKind, from: number, to: number): void {
    const { origin } = this.folded;
    found.push({ kind, start: origin[from]!, end: origin[to - 1]! + 1 });
  }

  /** Adds every occurrence of `singles`, and of `pairs` within their reach (`NearNeedle`). */
  find(
    singles: typeof SINGLE_NEEDLES,
    pairs: typeof NEAR_NEEDLES,
    found: PoisoningFinding[],
  ): void {
    for (const [kind, needle] of singles) {
      const at = this.of(needle);
      for (let index = 0; index < at.start.length; index++) {
        this.span(found, kind, at.start[index]!, at.end[index]!);
      }
    }
    for (const [kind, trigger, near, words] of pairs) {
      const nears = this.of(near);
      if (nears.start.length === 0) continue;
      const triggers = this.of(trigger);
      const unless = NEAR_NOT_BEFORE.get(trigger);
      let next = 0;
      for (let index = 0; index < triggers.start.length; index++) {
        const after = triggers.end[index]!;
        while (next < nears.start.length && nears.start[next]! < after) next++;
        if (next === nears.start.length) break;
        // The first near word in reach completes the pair — unless the words after it make it
        // none (`NEAR_NOT_BEFORE`); then the next one in reach may (near words in reach are
        // bounded by the pair's window, so this stays linear).
        for (let at = next; at < nears.start.length; at++) {
          if (!this.near(triggers.start[index]!, after, nears.start[at]!, words)) break;
          if (unless?.some((sequence) => this.followedBy(nears.end[at]!, sequence))) continue;
          this.span(found, kind, triggers.start[index]!, nears.end[at]!);
          break;
        }
      }
    }
  }

  // Whether `sequence` follows folded index `at`, word by word, each a whole word.
  private followedBy(at: number, sequence: readonly string[]): boolean {
    let from = at;
    for (const word of sequence) {
      if (!wordAt(this.folded, from, word)) return false;
      from += word.length;
    }
    return true;
  }

  // Whether a near word at `at` completes the trigger `[from, after)`: in its sentence, and
  // within `words` words or, without, PAIR_WINDOW folded units.
  private near(from: number, after: number, at: number, words: number | undefined): boolean {
    const { origin } = this.folded;
    if (this.sentence[origin[from]!] !== this.sentence[origin[at]!]) return false;
    if (words === undefined) return at - after <= PAIR_WINDOW;
    // Words between: the gaps from the trigger's end to the near word's start, less its own.
    this.gapsBefore ??= gapCounts(this.folded.gap);
    return this.gapsBefore[at + 1]! - this.gapsBefore[after]! - 1 <= words;
  }
}

// `counts[i]`: how many units before `i` follow a gap (a prefix sum, for counting words).
function gapCounts(gap: Uint8Array): Int32Array {
  const counts = new Int32Array(gap.length + 1);
  for (let index = 0; index < gap.length; index++) counts[index + 1] = counts[index]! + gap[index]!;
  return counts;
}

/**
 * For each index of `text`, where its sentence starts, as word pairs are bounded: a sentence
 * ends after `.`, `!` or `?` before a blank (or the end), or at a blank line. A single line
 * break does not end one: descriptions wrap lines, and the parts of a model view are joined by
 * one (so a sentence split between two fields is still read as one). Linear.
 */
export function pairSentences(text: string): Int32Array {
  const start = new Int32Array(text.length + 1);
  let from = 0;
  let lineBlank = false;
  for (let index = 0; index < text.length; index++) {
    start[index] = from;
    const code = text.charCodeAt(index);
    if (code === 0x0a) {
      if (lineBlank) from = index + 1;
      lineBlank = true;
    } else if (code !== 0x20 && code !== 0x09 && code !== 0x0d) {
      lineBlank = false;
      if (endsSentence(text, index, code)) from = index + 1;
    }
  }
  start[text.length] = from;
  return start;
}

/**
 * Whether the unit `code` at `index` of `text` ends a sentence: `.`, `!` or `?` before a blank
 * (what `/\s/` matches) or the end of the text.
 */
export function endsSentence(text: string, index: number, code: number): boolean {
  if (code !== 0x2e && code !== 0x21 && code !== 0x3f) return false;
  if (index + 1 >= text.length) return true;
  const next = text.charCodeAt(index + 1);
  if (next < 0x80) return next === 0x20 || (next >= 0x09 && next <= 0x0d);
  return BLANK.test(text[index + 1]!);
}

const BLANK = /\s/;

/**
 * Every position where `needle` occurs in the folded text as a whole word (and not before a
 * word that makes it none: see `NOT_BEFORE`), from `starts` (every position it starts at, in
 * order) or, without, found with `indexOf`.
 */
function occurrences(
  folded: Folded,
  needle: string,
  starts: readonly number[] = indexesOf(folded.text, needle),
): Occurrences {
  const found: Occurrences = { start: [], end: [] };
  const { text, gap } = folded;
  const checkStart = isAlnum(needle, 0);
  const checkEnd = isAlnum(needle, needle.length - 1);
  const exceptions = NOT_BEFORE.get(needle);
  for (const at of starts) {
    const end = at + needle.length;
    if (checkStart && at > 0 && gap[at] === 0 && isAlnum(text, at - 1)) continue;
    if (checkEnd && end < text.length && gap[end] === 0 && isAlnum(text, end)) continue;
    if (exceptions?.some((word) => wordAt(folded, end, word))) continue;
    found.start.push(at);
    found.end.push(end);
  }
  return found;
}

// Every index where `needle` starts in `text`, overlapping occurrences included.
function indexesOf(text: string, needle: string): number[] {
  const starts: number[] = [];
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + 1)) starts.push(at);
  return starts;
}

// Whether the folded text holds `word` as a whole word at `at`.
function wordAt(folded: Folded, at: number, word: string): boolean {
  const { text, gap } = folded;
  const end = at + word.length;
  return (
    gap[at] === 1 &&
    text.startsWith(word, at) &&
    (end >= text.length || gap[end] === 1 || !isAlnum(text, end))
  );
}
