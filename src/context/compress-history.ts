import type { BaseMessage } from '@langchain/core/messages';
import { isGraphBubbleUp } from '@langchain/langgraph';
import type { MessageTokenCounter } from './count-tokens.js';
import { extractiveSummarizer } from './extractive-summarizer.js';
import { fitText } from './fit-text.js';
import type { HistoryUnit } from './history-units.js';
import { PrefixHasher } from './message-fingerprint.js';
import type { Summarizer } from './summarizer.js';
import type { CachedSummary, SummaryCache } from './summary-cache.js';
import { truncateToolOutput } from './truncate-tool-output.js';

/** Inputs of {@link compressHistory}; the compiler fills them in. */
export interface CompressHistoryInput {
  units: readonly HistoryUnit[];
  /** Index in `units` of the latest user message, which is always kept. */
  pinned: number | undefined;
  /** Tokens for the kept messages plus the summary block. */
  budget: number;
  counter: MessageTokenCounter;
  maxToolOutputTokens: number;
  summaryTokens: number;
  /** Tokens the summary's heading adds to the system message. */
  summaryOverhead: number;
  /** After a new summary, the verbatim tail fills at most this share of its budget. */
  compressionTarget: number;
  summarizer: Summarizer;
  cache: SummaryCache;
  threadId: string;
  signal?: AbortSignal;
}

/** One tool output shortened in the compiled history. */
export interface TruncationRecord {
  /** Index of the message in the input history. */
  index: number;
  toolCallId: string;
  fromTokens: number;
  toTokens: number;
}

/** The summary standing in for older turns. */
export interface HistorySummary {
  text: string;
  tokens: number;
  /** Messages of the input history the summary replaces. */
  coveredMessages: number;
  /** `hit`: reused as is; `extended`: a cached summary extended by newer turns; `miss`: new. */
  cache: 'hit' | 'extended' | 'miss';
  summarizer: string;
  /** Set when the configured summariser failed and the extractive one stood in. */
  fallbackReason?: string;
}

/** What {@link compressHistory} kept. */
export interface CompressedHistory {
  messages: BaseMessage[];
  /** Tokens of `messages` (overhead included, reply priming excluded). */
  tokens: number;
  summary?: HistorySummary;
  truncations: TruncationRecord[];
  /** Messages neither kept nor summarised (only when no summary fits at all). */
  droppedMessages: number;
}

/** Below this many tokens a summary says too little to be worth its heading. */
const MIN_SUMMARY_TOKENS = 32;
const fallbackSummarizer = extractiveSummarizer();

/**
 * Fits a history into `budget`: keeps the most recent units verbatim (tool outputs over
 * `maxToolOutputTokens` shortened), always keeps the latest user message, and replaces the
 * older units with one summary, reusing or extending a cached summary when the same span was
 * summarised before. Units are kept or summarised whole, so no tool call is ever separated
 * from its results. Only the units that can be kept are counted.
 */
export async function compressHistory(input: CompressHistoryInput): Promise<CompressedHistory> {
  const { units, pinned, budget } = input;
  const costs = new UnitCosts(input);
  const count = units.length;
  // Newest first: does everything fit as it is?
  let start = count;
  let total = 0;
  while (start > 0 && total + costs.of(start - 1) <= budget) {
    total += costs.of(start - 1);
    start -= 1;
  }
  if (start === 0) return costs.keep(0, pinned, total, undefined, 0);

  const pinnedCost = pinned === undefined ? 0 : costs.of(pinned);
  const summaryTokens = Math.min(input.summaryTokens, budget - input.summaryOverhead - pinnedCost);
  const withSummary = summaryTokens >= MIN_SUMMARY_TOKENS;
  const verbatimBudget = withSummary ? budget - input.summaryOverhead - summaryTokens : budget;
  // tail(k): tokens of units k..end plus the pinned message when it lies before k.
  const suffix: number[] = [];
  suffix[count] = 0;
  const tail = (k: number) => suffix[k]! + (pinned !== undefined && pinned < k ? pinnedCost : 0);
  let minimum = count;
  while (minimum > 0) {
    suffix[minimum - 1] = suffix[minimum]! + costs.of(minimum - 1);
    if (tail(minimum - 1) > verbatimBudget) break;
    minimum -= 1;
  }
  if (!withSummary) {
    const dropped =
      countMessages(units, 0, minimum) - (pinned !== undefined && pinned < minimum ? 1 : 0);
    return costs.keep(minimum, pinned, tail(minimum), undefined, dropped);
  }
  let target = minimum;
  while (target < count - 1 && tail(target) > verbatimBudget * input.compressionTarget) target += 1;

  const summarisable = pinned === undefined ? units : units.filter((_, index) => index !== pinned);
  const toSummarised = (k: number) => k - (pinned !== undefined && pinned < k ? 1 : 0);
  const toUnit = (covered: number) =>
    pinned !== undefined && pinned < covered ? covered + 1 : covered;
  const seed = `${input.summarizer.id}`;
  const entries = (await input.cache.recent(input.threadId))
    .filter(
      (entry) =>
        entry.summarizer === input.summarizer.id && entry.coveredUnits <= summarisable.length,
    )
    .sort((a, b) => a.coveredUnits - b.coveredUnits);
  const wanted = [
    ...new Set([...entries.map((entry) => entry.coveredUnits), toSummarised(target)]),
  ];
  const hashes = prefixHashes(summarisable, seed, wanted);
  const matching = entries.filter((entry) => hashes.get(entry.coveredUnits) === entry.spanHash);

  const hit = matching.find(
    (entry) =>
      entry.coveredUnits >= toSummarised(minimum) &&
      entry.tokens <= summaryTokens &&
      tail(toUnit(entry.coveredUnits)) + entry.tokens + input.summaryOverhead <= budget,
  );
  if (hit) {
    const k = toUnit(hit.coveredUnits);
    return costs.keep(k, pinned, tail(k), summaryOf(hit, summarisable, 'hit'), 0);
  }
  const coveredTarget = toSummarised(target);
  const base = matching
    .filter((entry) => entry.coveredUnits < coveredTarget && entry.tokens <= summaryTokens)
    .at(-1);
  const span = summarisable
    .slice(base?.coveredUnits ?? 0, coveredTarget)
    .flatMap((unit) => unit.messages);
  const written = await summarise(input, span, base?.summary, summaryTokens);
  const entry: CachedSummary = {
    coveredUnits: coveredTarget,
    spanHash: hashes.get(coveredTarget)!,
    summary: written.text,
    tokens: written.tokens,
    summarizer: written.summarizer,
  };
  // A fallback summary is not cached under the failed summariser's id, so it is retried next turn.
  if (written.fallbackReason === undefined) await input.cache.put(input.threadId, entry);
  const summary = summaryOf(entry, summarisable, base ? 'extended' : 'miss');
  if (written.fallbackReason !== undefined) summary.fallbackReason = written.fallbackReason;
  return costs.keep(target, pinned, tail(target), summary, 0);
}

async function summarise(
  input: CompressHistoryInput,
  messages: BaseMessage[],
  previousSummary: string | undefined,
  maxTokens: number,
): Promise<{ text: string; tokens: number; summarizer: string; fallbackReason?: string }> {
  const tokenizer = input.counter.tokenizer;
  const request = {
    messages,
    maxTokens,
    countTokens: (text: string) => tokenizer.count(text),
    ...(previousSummary === undefined ? {} : { previousSummary }),
    ...(input.signal ? { signal: input.signal } : {}),
  };
  let summarizer = input.summarizer;
  let fallbackReason: string | undefined;
  let text: string;
  try {
    text = await summarizer.summarize(request);
  } catch (error) {
    // Interrupts and cancellations are the graph's business, not a summariser failure.
    if (isGraphBubbleUp(error) || input.signal?.aborted) throw error;
    fallbackReason = error instanceof Error ? error.message : String(error);
    summarizer = fallbackSummarizer;
    text = await summarizer.summarize(request);
  }
  const fitted = fitText(text, maxTokens, tokenizer);
  return {
    ...fitted,
    summarizer: summarizer.id,
    ...(fallbackReason === undefined ? {} : { fallbackReason }),
  };
}

function summaryOf(
  entry: CachedSummary,
  summarisable: readonly HistoryUnit[],
  cache: HistorySummary['cache'],
): HistorySummary {
  return {
    text: entry.summary,
    tokens: entry.tokens,
    coveredMessages: countMessages(summarisable, 0, entry.coveredUnits),
    cache,
    summarizer: entry.summarizer,
  };
}

function prefixHashes(
  units: readonly HistoryUnit[],
  seed: string,
  counts: number[],
): Map<number, string> {
  const hasher = new PrefixHasher(units, seed);
  const hashes = new Map<number, string>();
  for (const covered of [...counts].sort((a, b) => a - b)) hashes.set(covered, hasher.at(covered));
  return hashes;
}

function countMessages(units: readonly HistoryUnit[], from: number, to: number): number {
  let messages = 0;
  for (let index = from; index < to; index++) messages += units[index]!.messages.length;
  return messages;
}

/** Per-unit token costs with tool truncation applied, computed on demand and memoised. */
class UnitCosts {
  readonly #input: CompressHistoryInput;
  readonly #costs: number[] = [];
  readonly #prepared: BaseMessage[][] = [];
  readonly #truncations: TruncationRecord[][] = [];

  constructor(input: CompressHistoryInput) {
    this.#input = input;
  }

  of(index: number): number {
    let cost = this.#costs[index];
    if (cost === undefined) {
      cost = this.#prepare(index);
      this.#costs[index] = cost;
    }
    return cost;
  }

  /** The result that keeps units `from..end` (and the pinned unit when it lies before). */
  keep(
    from: number,
    pinned: number | undefined,
    tokens: number,
    summary: HistorySummary | undefined,
    droppedMessages: number,
  ): CompressedHistory {
    const kept = pinned !== undefined && pinned < from ? [pinned] : [];
    for (let index = from; index < this.#input.units.length; index++) kept.push(index);
    const messages: BaseMessage[] = [];
    const truncations: TruncationRecord[] = [];
    for (const index of kept) {
      this.of(index);
      messages.push(...this.#prepared[index]!);
      truncations.push(...this.#truncations[index]!);
    }
    return { messages, tokens, truncations, droppedMessages, ...(summary ? { summary } : {}) };
  }

  #prepare(index: number): number {
    const { units, counter, maxToolOutputTokens } = this.#input;
    const unit = units[index]!;
    const prepared: BaseMessage[] = [];
    const truncations: TruncationRecord[] = [];
    let cost = 0;
    for (let offset = 0; offset < unit.messages.length; offset++) {
      let message = unit.messages[offset]!;
      let tokens = counter.message(message);
      if (tokens > maxToolOutputTokens && message.getType() === 'tool') {
        const truncation = truncateToolOutput(message, maxToolOutputTokens, counter.tokenizer);
        if (truncation) {
          message = truncation.message;
          tokens = counter.message(message);
          truncations.push({
            index: unit.start + offset,
            toolCallId: truncation.message.tool_call_id,
            fromTokens: truncation.fromTokens,
            toTokens: truncation.toTokens,
          });
        }
      }
      prepared.push(message);
      cost += tokens;
    }
    this.#prepared[index] = prepared;
    this.#truncations[index] = truncations;
    return cost;
  }
}
