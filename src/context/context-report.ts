import type { SectionTokens } from './budgets.js';
import type { CompressedHistory, HistorySummary, TruncationRecord } from './compress-history.js';
import type { ExcludedMemory, PackedMemories } from './pack-memories.js';

/**
 * What one `compile()` did, section by section. JSON-safe; it is also the payload of the
 * `context_compiled` audit event (it never contains message text).
 */
export interface ContextReport {
  model: string;
  /** Encoding used for counting, e.g. `o200k_base`. */
  encoding: string;
  /** True when the model's own tokenizer is not available offline and o200k stands in. */
  approximateTokenizer: boolean;
  contextLimit: number;
  /** V_e: the share of the context limit the compiler fills. */
  effectiveWindow: number;
  /** Each section's nominal budget in tokens. */
  budgets: SectionTokens;
  /**
   * Tokens per section as budgeted (each block's exact count plus the separators joining it
   * into the system message); `total` is the exact count of the compiled request, tool
   * definitions included.
   */
  tokens: {
    system: number;
    memories: number;
    tools: number;
    /** Verbatim history messages. */
    history: number;
    /** The summary of older turns (counted against the history budget). */
    summary: number;
    /** Messages, reply priming and tool definitions: what the model will be sent. */
    total: number;
  };
  /** Sections that used more than their share; the excess came out of the history budget. */
  overBudget: Array<'system' | 'tools'>;
  history: {
    inputMessages: number;
    keptMessages: number;
    summarizedMessages: number;
    /** Messages neither kept nor summarised (orphan tool messages, or no room for a summary). */
    droppedMessages: number;
    /** System messages found in the history and moved into the one system message. */
    liftedSystemMessages: number;
  };
  summary?: Omit<HistorySummary, 'text'>;
  /** Tool outputs shortened to head + tail. */
  truncated: TruncationRecord[];
  /** Input messages left out, with why. */
  dropped: Array<{ index: number; reason: 'orphan_tool_message' }>;
  memories: { offered: number; included: number; excluded: ExcludedMemory[] };
  /** True when a cached summary was used as is or extended. */
  cacheHit: boolean;
}

/** What {@link buildReport} needs from one compile. */
export interface ReportInput {
  compiler: {
    model: string;
    counter: { tokenizer: { encoding: string } };
    approximateTokenizer: boolean;
    contextLimit: number;
    effectiveWindow: number;
    budgets: SectionTokens;
  };
  tokens: { system: number; memories: number; tools: number; total: number };
  summaryOverhead: number;
  compressed: CompressedHistory;
  memories: PackedMemories;
  offeredMemories: number;
  inputMessages: number;
  orphans: readonly number[];
  liftedSystemMessages: number;
}

/** Assembles the {@link ContextReport} of one compile. */
export function buildReport(input: ReportInput): ContextReport {
  const { compiler, tokens, compressed } = input;
  const summary = compressed.summary;
  return {
    model: compiler.model,
    encoding: compiler.counter.tokenizer.encoding,
    approximateTokenizer: compiler.approximateTokenizer,
    contextLimit: compiler.contextLimit,
    effectiveWindow: compiler.effectiveWindow,
    budgets: compiler.budgets,
    tokens: {
      system: tokens.system,
      memories: tokens.memories,
      tools: tokens.tools,
      history: compressed.tokens,
      summary: summary ? summary.tokens + input.summaryOverhead : 0,
      total: tokens.total,
    },
    overBudget: [
      ...(tokens.system > compiler.budgets.system ? (['system'] as const) : []),
      ...(tokens.tools > compiler.budgets.tools ? (['tools'] as const) : []),
    ],
    history: {
      inputMessages: input.inputMessages,
      keptMessages: compressed.messages.length,
      summarizedMessages: summary?.coveredMessages ?? 0,
      droppedMessages: compressed.droppedMessages + input.orphans.length,
      liftedSystemMessages: input.liftedSystemMessages,
    },
    ...(summary ? { summary: withoutText(summary) } : {}),
    truncated: compressed.truncations,
    dropped: input.orphans.map((index) => ({ index, reason: 'orphan_tool_message' as const })),
    memories: {
      offered: input.offeredMemories,
      included: input.memories.included.length,
      excluded: input.memories.excluded,
    },
    cacheHit: summary?.cache === 'hit' || summary?.cache === 'extended',
  };
}

function withoutText(summary: HistorySummary): Omit<HistorySummary, 'text'> {
  const { text: _text, ...rest } = summary;
  return rest;
}
