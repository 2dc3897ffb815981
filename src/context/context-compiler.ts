import { type BaseMessage, HumanMessage, SystemMessage } from '@langchain/core/messages';
import { type AuditLog, deriveEventId, sha256Hex } from '../audit/index.js';
import type { Database } from '../db/index.js';
import { VeridexError } from '../errors/index.js';
import {
  resolveBudgets,
  type SectionBudgets,
  type SectionTokens,
  sectionTokens,
} from './budgets.js';
import { compressHistory } from './compress-history.js';
import { buildReport, type ContextReport } from './context-report.js';
import {
  MESSAGE_OVERHEAD_TOKENS,
  type MessageTokenCounter,
  messageCounterFor,
  REPLY_PRIMING_TOKENS,
} from './count-tokens.js';
import { extractiveSummarizer } from './extractive-summarizer.js';
import { groupHistory } from './history-units.js';
import { messageFingerprint } from './message-fingerprint.js';
import { contextLimitFor, encodingFor } from './model-limits.js';
import { type ContextMemory, packMemories } from './pack-memories.js';
import { PostgresSummaryCache } from './postgres-summary-cache.js';
import { plainText, type Summarizer } from './summarizer.js';
import { MemorySummaryCache, type SummaryCache } from './summary-cache.js';
import { type Tokenizer, tokenizerFor } from './tokenizer.js';
import { type ContextTool, toolDefinitionTokens } from './tool-definition-tokens.js';

/** Options for {@link ContextCompiler}. */
export interface ContextCompilerOptions {
  /** A model name (`gpt-4o`, `claude-sonnet-4-5`, `llama3.1:8b`) or a chat model with `model`/`modelName`. */
  model: string | { model?: unknown; modelName?: unknown };
  /** The model's context window in tokens; overrides the table of known models. */
  contextLimit?: number;
  /** V_e as a fraction of the context limit. Default 0.6 (quality drops well before the limit). */
  effectiveWindow?: number;
  /** Section shares of V_e. Default 15/25/15/35/10 (system/memories/tools/history/headroom). */
  budgets?: Partial<SectionBudgets>;
  /** Summarises older turns. Default {@link extractiveSummarizer} (offline). */
  summarizer?: Summarizer;
  /** Default: `gpt-tokenizer` with the model's encoding (o200k for non-OpenAI models). */
  tokenizer?: Tokenizer;
  /** When given, every compile appends a `context_compiled` event. */
  audit?: AuditLog;
  /** When given (and no `summaryCache`), summaries are cached in `veridex_context_summaries`. */
  database?: Database;
  /** Where summaries are cached. Default: the database when given, else process memory. */
  summaryCache?: SummaryCache;
  /** Longest summary in tokens. Default min(2,000, 20% of the history share). */
  summaryTokens?: number;
  /** Tool outputs longer than this are cut to head + tail. Default min(4,000, 25% of the history share). */
  maxToolOutputTokens?: number;
  /** After summarising, recent turns fill at most this share of their budget, leaving room to grow. Default 0.7. */
  compressionTarget?: number;
}

/** What to compile. */
export interface CompileInput {
  /** The system prompt; never dropped. */
  system?: string;
  /** Procedural memory: standing instructions and workflows, appended to the system prompt. */
  procedural?: string | readonly string[];
  /** Retrieved memories with relevance scores; packed by score per token. */
  memories?: readonly ContextMemory[];
  /** Tools bound to the model; counted, never dropped. */
  tools?: readonly ContextTool[];
  /** The conversation so far (LangGraph's `messages`); never modified. */
  history: readonly BaseMessage[];
  /** The new user message, when it is not already the last message of `history`. */
  query?: string | BaseMessage;
  /** Keys the summary cache and the audit event. Default `default`. */
  threadId?: string;
  signal?: AbortSignal;
}

/** The compiled request: messages for the model and what was done to get them. */
export interface CompiledContext {
  messages: BaseMessage[];
  report: ContextReport;
}

/** Heading of the summary block in the system message. */
export const SUMMARY_HEADING = '## Summary of earlier conversation';
/** Heading of the procedural-memory block in the system message. */
export const PROCEDURES_HEADING = '## Procedures';

/**
 * Compiles what a model sees on each turn within an effective window V_e (a fraction of the
 * model's context limit), split into section budgets: system, memories, tools, history and
 * headroom for the answer. Counts are exact (`gpt-tokenizer`, chat overhead included). When
 * history overflows, older turns are summarised (cached per thread), oversize tool outputs
 * are cut, and the system prompt, the latest user message and every tool call–result pair
 * stay intact. The output is one system message followed by history messages.
 *
 * @throws VeridexError `config_invalid` for an unknown model without `contextLimit` or bad shares.
 * @example
 * const compiler = new ContextCompiler({ model: 'gpt-4o' });
 * const { messages, report } = await compiler.compile({ system: 'You pay invoices.', history: state.messages });
 */
export class ContextCompiler {
  readonly model: string;
  readonly contextLimit: number;
  /** V_e in tokens. */
  readonly effectiveWindow: number;
  readonly budgets: SectionTokens;
  readonly counter: MessageTokenCounter;
  readonly approximateTokenizer: boolean;
  readonly summarizer: Summarizer;
  readonly summaryCache: SummaryCache;
  readonly #options: ContextCompilerOptions;
  readonly #textCounts = new Map<string, number>();

  constructor(options: ContextCompilerOptions) {
    this.model = modelName(options.model);
    this.contextLimit = contextLimitFor(this.model, options.contextLimit);
    const fraction = options.effectiveWindow ?? 0.6;
    if (!(fraction > 0 && fraction <= 1)) {
      throw new VeridexError(
        'config_invalid',
        `effectiveWindow is a fraction of the context limit in (0, 1]; got ${fraction}.`,
      );
    }
    this.effectiveWindow = Math.floor(this.contextLimit * fraction);
    this.budgets = sectionTokens(this.effectiveWindow, resolveBudgets(options.budgets));
    const { encoding, approximate } = encodingFor(this.model);
    this.counter = messageCounterFor(options.tokenizer ?? tokenizerFor(encoding));
    this.approximateTokenizer = options.tokenizer ? false : approximate;
    this.summarizer = options.summarizer ?? extractiveSummarizer();
    this.summaryCache =
      options.summaryCache ??
      (options.database ? new PostgresSummaryCache(options.database) : new MemorySummaryCache());
    this.#options = options;
  }

  /**
   * Compiles one model request.
   * @throws VeridexError `context_budget_exceeded` when the system prompt, tool definitions and
   * latest user message alone do not fit V_e minus headroom.
   */
  async compile(input: CompileInput): Promise<CompiledContext> {
    const threadId = input.threadId ?? 'default';
    const history = withQuery(input.history, input.query);
    const { units, orphans, systemMessages } = groupHistory(history);
    const pinned = findLastIndex(units, (unit) => unit.human);
    const systemText = joinBlocks([
      input.system ?? '',
      ...systemMessages.map((index) => plainText(history[index]!.content)),
      proceduresBlock(input.procedural),
    ]);
    const systemTokens = systemText ? this.#countText(systemText) + 2 : 0;
    const toolsTokens = (input.tools ?? []).reduce(
      (sum, tool) => sum + toolDefinitionTokens(tool, this.counter.tokenizer),
      0,
    );
    const systemOverhead = MESSAGE_OVERHEAD_TOKENS + this.counter.text('system');
    const available = this.effectiveWindow - this.budgets.headroom;
    const fixed = REPLY_PRIMING_TOKENS + systemOverhead + systemTokens + toolsTokens;
    const pinnedTokens =
      pinned === undefined ? 0 : this.counter.message(units[pinned]!.messages[0]!);
    if (fixed + pinnedTokens > available) {
      throw this.#overflow(systemTokens, toolsTokens, pinnedTokens, available);
    }
    const memories = packMemories(
      input.memories ?? [],
      Math.min(this.budgets.memories, available - fixed - pinnedTokens),
      this.counter,
    );
    let historyBudget = available - fixed - memories.tokens;
    const defaultShare = this.budgets.history;
    const summaryOverhead = this.counter.text(SUMMARY_HEADING) + 3;
    for (let attempt = 0; ; attempt++) {
      const compressed = await compressHistory({
        units,
        pinned,
        budget: historyBudget,
        counter: this.counter,
        maxToolOutputTokens:
          this.#options.maxToolOutputTokens ??
          Math.max(64, Math.min(4_000, Math.floor(defaultShare / 4))),
        summaryTokens:
          this.#options.summaryTokens ??
          Math.max(64, Math.min(2_000, Math.floor(defaultShare / 5))),
        summaryOverhead,
        compressionTarget: this.#options.compressionTarget ?? 0.7,
        summarizer: this.summarizer,
        cache: this.summaryCache,
        threadId,
        ...(input.signal ? { signal: input.signal } : {}),
      });
      const summaryBlock = compressed.summary
        ? `${SUMMARY_HEADING}\n${compressed.summary.text}`
        : '';
      const text = joinBlocks([systemText, summaryBlock, memories.text]);
      const messages = text
        ? [new SystemMessage(text), ...compressed.messages]
        : [...compressed.messages];
      const total =
        REPLY_PRIMING_TOKENS +
        (text ? systemOverhead + this.#countText(text) : 0) +
        compressed.tokens +
        toolsTokens;
      // The budgets above are upper bounds, so this holds; the retry guards against tokenizer
      // quirks at block boundaries rather than ever letting the request exceed V_e.
      if (total > available) {
        if (attempt === 3) throw this.#overflow(systemTokens, toolsTokens, pinnedTokens, available);
        historyBudget -= total - available;
        continue;
      }
      const report = buildReport({
        compiler: this,
        tokens: { system: systemTokens, memories: memories.tokens, tools: toolsTokens, total },
        summaryOverhead,
        compressed,
        memories,
        offeredMemories: input.memories?.length ?? 0,
        inputMessages: history.length,
        orphans,
        liftedSystemMessages: systemMessages.length,
      });
      if (this.#options.audit) await this.#audit(threadId, input, history, report);
      return { messages, report };
    }
  }

  async #audit(
    threadId: string,
    input: CompileInput,
    history: readonly BaseMessage[],
    report: ContextReport,
  ) {
    // Same input, same id: a node re-run after a resume appends nothing new.
    const last = history.at(-1);
    const inputHash = sha256Hex(
      JSON.stringify([
        history.length,
        last ? messageFingerprint(last) : null,
        input.system ?? null,
        input.procedural ?? null,
        (input.memories ?? []).map((memory) => [
          memory.id ?? null,
          memory.score,
          memory.content.length,
        ]),
      ]),
    );
    await this.#options.audit!.append({
      threadId,
      type: 'context_compiled',
      eventId: deriveEventId(threadId, 'context_compiled', inputHash),
      payload: report as unknown as Record<string, unknown>,
    });
  }

  #countText(text: string): number {
    let tokens = this.#textCounts.get(text);
    if (tokens === undefined) {
      tokens = this.counter.text(text);
      // A few recent texts: the system block is usually identical from turn to turn.
      if (this.#textCounts.size >= 16)
        this.#textCounts.delete(this.#textCounts.keys().next().value!);
      this.#textCounts.set(text, tokens);
    }
    return tokens;
  }

  #overflow(system: number, tools: number, query: number, available: number): VeridexError {
    return new VeridexError(
      'context_budget_exceeded',
      `The system prompt (${system} tokens), tool definitions (${tools}) and the latest user message (${query}) need ${system + tools + query} tokens, but ${this.model}'s effective window leaves ${available} after headroom (V_e ${this.effectiveWindow} of ${this.contextLimit}). Shorten the system prompt, tool descriptions or message, or raise effectiveWindow or contextLimit.`,
      { details: { system, tools, query, available, effectiveWindow: this.effectiveWindow } },
    );
  }
}

function modelName(model: ContextCompilerOptions['model']): string {
  if (typeof model === 'string') return model;
  if (typeof model.model === 'string') return model.model;
  if (typeof model.modelName === 'string') return model.modelName;
  throw new VeridexError(
    'config_invalid',
    'ContextCompiler needs a model name: pass a string such as "gpt-4o" or a chat model with a `model` field.',
  );
}

function withQuery(
  history: readonly BaseMessage[],
  query: CompileInput['query'],
): readonly BaseMessage[] {
  if (query === undefined) return history;
  const message = typeof query === 'string' ? new HumanMessage(query) : query;
  return history.at(-1) === message ? history : [...history, message];
}

function proceduresBlock(procedural: CompileInput['procedural']): string {
  if (procedural === undefined) return '';
  const items = typeof procedural === 'string' ? [procedural] : [...procedural];
  const lines = items.map((item) => item.trim()).filter(Boolean);
  return lines.length === 0
    ? ''
    : `${PROCEDURES_HEADING}\n${lines.map((line) => `- ${line}`).join('\n')}`;
}

function joinBlocks(blocks: readonly string[]): string {
  return blocks
    .map((block) => block.trim())
    .filter(Boolean)
    .join('\n\n');
}

function findLastIndex<T>(
  items: readonly T[],
  predicate: (item: T) => boolean,
): number | undefined {
  for (let index = items.length - 1; index >= 0; index--)
    if (predicate(items[index]!)) return index;
  return undefined;
}
