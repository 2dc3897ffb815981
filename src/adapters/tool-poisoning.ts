import { decodeHtmlEntitiesDeep } from './html-entities.js';
import { NeedleAutomaton } from './needle-automaton.js';
import {
  IMAGE_SHAPE,
  NEAR_NEEDLES,
  type PoisoningFinding,
  type PoisoningKind,
  SINGLE_NEEDLES,
} from './poisoning-needles.js';
import { foldForScan, isAlnum, withoutJoiners } from './scan-folding.js';
import { base64Runs, escapeLayer, percentLayer } from './scan-layers.js';
import { endsSentence, NeedleIndex, pairSentences } from './scan-needles.js';
import { imageCarriesData, isShape } from './scan-shapes.js';
import { findComments, findTagBlocks } from './scan-tags.js';

export type { PoisoningFinding, PoisoningKind } from './poisoning-needles.js';
export { foldForScan } from './scan-folding.js';

/** Longest prefix of one imported text that is scanned and kept (characters). */
export const MAX_SCANNED_TEXT = 65_536;

/** The text without its poisoning blocks, and what they were. */
export interface PoisoningScan {
  text: string;
  findings: PoisoningKind[];
}

// Needles of letters and digits only are matched in the folding without joiners and tags
// (`withoutJoiners`), where `I.g.n.o.r.e` and `Ig<b></b>nore` read as words; needles that are
// punctuation themselves (`~/.ssh`, `process.env`, `http://`, `don't`) and shapes (`{host}`)
// in the folding as is.
const isWord = (needle: string): boolean =>
  !isShape(needle) && [...needle].every((_, index) => isAlnum(needle, index));
const WORD_SINGLES = SINGLE_NEEDLES.filter(([, needle]) => isWord(needle));
const MARK_SINGLES = SINGLE_NEEDLES.filter(([, needle]) => !isWord(needle));
const WORD_PAIRS = NEAR_NEEDLES.filter(([, trigger, near]) => isWord(trigger) && isWord(near));
const MARK_PAIRS = NEAR_NEEDLES.filter(([, trigger, near]) => !isWord(trigger) || !isWord(near));

// Every string needle of a folding, found together in one pass (shapes are parsed apart).
const automatonOf = (
  singles: typeof SINGLE_NEEDLES,
  pairs: readonly (typeof NEAR_NEEDLES)[number][],
): NeedleAutomaton => {
  const needles = [
    ...singles.map(([, needle]) => needle),
    ...pairs.flatMap(([, trigger, near]) => [trigger, near]),
  ];
  return new NeedleAutomaton([...new Set(needles)].filter((needle) => !isShape(needle)));
};
const MARK_NEEDLES = automatonOf(MARK_SINGLES, MARK_PAIRS);
const WORD_NEEDLES = automatonOf(WORD_SINGLES, WORD_PAIRS);

/**
 * Finds tool-poisoning instructions in an imported description and removes them: blocks in
 * tags addressed to the model (`<IMPORTANT>…</IMPORTANT>`, `<system>`, `<instructions>`, with
 * attributes or as the first word of a compound name — `<IMPORTANT class="x">`,
 * `<system-reminder>`, `<hidden_instructions>` — in any angle brackets, also escaped or
 * full-width; an unclosed one hides the rest of the text, unless it is a bare placeholder such as
 * "the <system> settings", which only holds), elements hidden from a rendered
 * view (`display:none`, `hidden`), HTML and markdown comments (`[//]: # (…)`), and every
 * sentence that tells the model to hide something from the user, reads key files or the
 * environment (`~/.ssh`, `id_rsa`, `.env`, `/etc/passwd`, `~/.cursor/mcp.json`,
 * `/proc/self/environ`, `process.env`, `$OPENAI_API_KEY`, API keys), sends data to a URL (with
 * or without its scheme, or in a markdown image), or addresses the model ("before using this
 * tool", "ignore all prior instructions", "you must"). Matching runs on {@link foldForScan}'s
 * folding, so case, width, spacing, hidden characters, look-alike letters and small capitals,
 * accents and combining marks, JSON and URL escapes and tag characters do not hide a marker;
 * marker words are also read across punctuation between their letters and across HTML tags
 * (`I.g.n.o.r.e`, `Ig<b></b>nore`: see `withoutJoiners`). Word pairs are matched within their
 * sentence (see `NEAR_NEEDLES`).
 *
 * Linear in the length of `text` (cut to {@link MAX_SCANNED_TEXT}): a fixed set of needles,
 * each found once with `indexOf` in one left-to-right pass, pairs matched with moving
 * pointers, shapes and tags parsed in bounded windows. The caller sanitises the result
 * (`sanitizeOutput`) like any imported text.
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

/** Further layers of percent-escapes read beyond the folding's own (so three in all). */
const PERCENT_LAYERS = 2;

/**
 * Every marker in `text`, uncut, with where it stands (the needles, tag blocks and comments
 * {@link scanToolPoisoning} removes). Encodings a model decodes on request are read too:
 * percent-escapes of percent-escapes (`%253C`, up to three layers with the folding's own:
 * see `percentLayer`), and every run of base64, hex or base32 that decodes to text
 * (`base64Runs`: blanks inside a base64 run ignored, readable stretches of a run kept, one more
 * base64 layer inside), whose findings stand for the whole run. Linear in the length of `text`:
 * each layer is at most as long as the text, and the decoded stretches a bounded multiple of it
 * (four alignments, one inner layer), all scanned in one pass.
 */
export function locatePoisoning(text: string): PoisoningFinding[] {
  const found = locatePercentLayers(text, 0);
  const runs = base64Runs(text);
  // Base64 written as escapes (`\u0053\u0057…`): the runs of the text with its escapes decoded
  // once, placed back in the text.
  const unescaped = escapeLayer(text);
  if (unescaped) {
    const place = (index: number) =>
      index < unescaped.text.length ? unescaped.origin[index]! : text.length;
    for (const run of base64Runs(unescaped.text)) {
      runs.push({ start: place(run.start), end: place(run.end), decoded: run.decoded });
    }
  }
  if (runs.length === 0) return found;
  // Every decoded stretch in ONE scan, apart by a blank line (a sentence end no pair crosses):
  // scanning each on its own cost a fixed ~0.25 ms per run, which a text of many short runs
  // multiplied. Each finding stands for the whole run it came from.
  const starts: number[] = [];
  let joined = '';
  for (const run of runs) {
    starts.push(joined.length);
    joined += `${run.decoded}${DECODED_SEPARATOR}`;
  }
  const seen = new Set<string>();
  for (const finding of locatePercentLayers(joined, 0)) {
    const run = runs[lastAtOrBefore(starts, finding.start)]!;
    const key = `${finding.kind}:${run.start}:${run.end}`;
    if (seen.has(key)) continue;
    seen.add(key);
    found.push({ kind: finding.kind, start: run.start, end: run.end });
  }
  return found;
}

const DECODED_SEPARATOR = '.\n\n';

/** The index of the last of the ascending `starts` at or before `at`. */
function lastAtOrBefore(starts: readonly number[], at: number): number {
  let low = 0;
  let high = starts.length - 1;
  while (low < high) {
    const middle = (low + high + 1) >> 1;
    if (starts[middle]! <= at) low = middle;
    else high = middle - 1;
  }
  return low;
}

// The markers of `text` and of its further percent-decoded layers, placed in `text`.
function locatePercentLayers(text: string, depth: number): PoisoningFinding[] {
  const found = locateIn(text);
  const layer = depth < PERCENT_LAYERS ? percentLayer(text) : undefined;
  if (layer) {
    const place = (index: number) =>
      index < layer.text.length ? layer.origin[index]! : text.length;
    for (const finding of locatePercentLayers(layer.text, depth + 1)) {
      found.push({
        ...finding,
        start: place(finding.start),
        end: place(finding.end),
        ...(finding.blockEnd !== undefined && { blockEnd: place(finding.blockEnd) }),
      });
    }
  }
  return found;
}

function locateIn(text: string): PoisoningFinding[] {
  const folded = foldForScan(text);
  const sentence = pairSentences(text);
  const found: PoisoningFinding[] = [];
  const marks = new NeedleIndex(folded, text, sentence, MARK_NEEDLES);
  marks.find(MARK_SINGLES, MARK_PAIRS, found);
  // A markdown image whose URL carries data leaks it when the reply showing it is rendered.
  const images = marks.of(IMAGE_SHAPE);
  for (let index = 0; index < images.start.length; index++) {
    if (imageCarriesData(folded, images.start[index]!, images.end[index]!)) {
      marks.span(found, 'exfiltration', images.start[index]!, images.end[index]!);
    }
  }
  const words = withoutJoiners(folded);
  new NeedleIndex(words, text, sentence, WORD_NEEDLES).find(WORD_SINGLES, WORD_PAIRS, found);
  // Tags dropped (`Ig<b></b>nore`): a second look only when there was a tag to drop.
  const untagged = folded.text.includes('<') ? withoutJoiners(folded, true) : words;
  if (untagged.text.length !== words.text.length) {
    new NeedleIndex(untagged, text, sentence, WORD_NEEDLES).find(WORD_SINGLES, WORD_PAIRS, found);
  }
  findTagBlocks(text, folded, found);
  findComments(text, found);
  return found;
}

function scanText(text: string): PoisoningScan {
  const found = locatePoisoning(text);
  if (found.length === 0) return { text, findings: [] };
  const remove = new Uint8Array(text.length + 1);
  const sentences = sentenceSpans(text);
  // A sentence is removed once, however many markers it holds (each fill is then linear).
  const removedSentence = new Uint8Array(text.length + 1);
  for (const finding of found) {
    if (finding.holdOnly) continue;
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
  const tidy = kept
    .replace(/[ \t]{2,}/g, ' ')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  return { text: tidy, findings: kinds };
}

// For each original index, the [start, end) of its sentence: sentences end after . ! ? followed
// by whitespace, or at a line break. Two linear passes.
function sentenceSpans(text: string): { start: Int32Array; end: Int32Array } {
  const start = new Int32Array(text.length + 1);
  const end = new Int32Array(text.length + 1);
  let from = 0;
  for (let index = 0; index < text.length; index++) {
    start[index] = from;
    const code = text.charCodeAt(index);
    if (code === 0x0a || endsSentence(text, index, code)) from = index + 1;
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
