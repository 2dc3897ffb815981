import {
  AIMessage,
  type BaseMessage,
  HumanMessage,
  SystemMessage,
  ToolMessage,
} from '@langchain/core/messages';
import { GraphInterrupt } from '@langchain/langgraph';
import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import { AuditLog } from '../../src/audit/index.js';
import {
  ContextCompiler,
  countTokens,
  extractiveSummarizer,
  llmSummarizer,
  MEMORIES_HEADING,
  SUMMARY_HEADING,
  type SummarizeRequest,
  type Summarizer,
} from '../../src/context/index.js';
import { VeridexError } from '../../src/errors/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { assertNoOrphans, conversation, filler } from './fixtures.js';

/** A summariser that records its calls and otherwise behaves like the extractive default. */
function countingSummarizer(): Summarizer & { calls: SummarizeRequest[] } {
  const inner = extractiveSummarizer();
  const calls: SummarizeRequest[] = [];
  return {
    id: inner.id,
    calls,
    summarize: (request) => {
      calls.push(request);
      return inner.summarize(request);
    },
  };
}

function systemText(messages: readonly BaseMessage[]): string {
  expect(messages[0]?.getType()).toBe('system');
  return messages[0]!.content as string;
}

describe('ContextCompiler budgets', () => {
  it("makes V_e 60% of the model's window and splits it 15/25/15/35/10", () => {
    const compiler = new ContextCompiler({ model: 'gpt-4o' });
    expect(compiler.contextLimit).toBe(128_000);
    expect(compiler.effectiveWindow).toBe(76_800);
    expect(compiler.budgets).toEqual({
      system: 11_520,
      memories: 19_200,
      tools: 11_520,
      history: 26_880,
      headroom: 7_680,
    });
  });

  it('takes the window and the fraction from options when given', () => {
    const compiler = new ContextCompiler({
      model: 'in-house-model',
      contextLimit: 10_000,
      effectiveWindow: 0.5,
    });
    expect(compiler.effectiveWindow).toBe(5_000);
    expect(compiler.approximateTokenizer).toBe(true);
  });

  it('refuses shares that sum above 1 and fractions outside (0, 1]', () => {
    const attempt = (make: () => unknown) => {
      try {
        make();
      } catch (error) {
        return VeridexError.is(error, 'config_invalid');
      }
      return false;
    };
    expect(attempt(() => new ContextCompiler({ model: 'gpt-4o', budgets: { history: 0.6 } }))).toBe(
      true,
    );
    expect(attempt(() => new ContextCompiler({ model: 'gpt-4o', effectiveWindow: 1.5 }))).toBe(
      true,
    );
    expect(attempt(() => new ContextCompiler({ model: 'gpt-4o', budgets: { tools: -0.1 } }))).toBe(
      true,
    );
  });

  it('lets budget that other sections leave unused flow to history', async () => {
    const compiler = new ContextCompiler({ model: 'gpt-4o', contextLimit: 10_000 });
    const history = conversation(25);
    const historyTokens = countTokens(history);
    // More than history's own 35% share (2,100) but within V_e minus headroom (5,400).
    expect(historyTokens).toBeGreaterThan(compiler.budgets.history);
    expect(historyTokens).toBeLessThan(5_000);
    const { messages, report } = await compiler.compile({ system: 'Be precise.', history });
    expect(messages.slice(1)).toEqual(history);
    expect(report.summary).toBeUndefined();
    expect(report.tokens.history).toBe(historyTokens - 3);
  });

  it('throws context_budget_exceeded when the system prompt and the latest message alone do not fit', async () => {
    const compiler = new ContextCompiler({ model: 'gpt-4o', contextLimit: 1_000 });
    const error = await compiler
      .compile({ system: filler(400, 1), history: [new HumanMessage(filler(300, 2))] })
      .catch((caught: unknown) => caught);
    expect(VeridexError.is(error, 'context_budget_exceeded')).toBe(true);
    expect((error as VeridexError).details.available).toBe(540);
  });
});

describe('ContextCompiler history', () => {
  it('returns a history that fits unchanged, after one system message', async () => {
    const compiler = new ContextCompiler({ model: 'gpt-4o' });
    const history = conversation(3);
    const { messages, report } = await compiler.compile({ system: 'You pay invoices.', history });
    expect(messages[0]).toBeInstanceOf(SystemMessage);
    expect(messages[0]!.content).toBe('You pay invoices.');
    expect(messages.slice(1)).toHaveLength(history.length);
    for (const [index, message] of messages.slice(1).entries())
      expect(message).toBe(history[index]);
    expect(report.tokens.total).toBe(countTokens(messages));
  });

  it('summarises older turns, keeps recent turns verbatim and stays within V_e', async () => {
    const compiler = new ContextCompiler({ model: 'gpt-4o', contextLimit: 8_000 });
    const history = conversation(120);
    const { messages, report } = await compiler.compile({ system: 'You pay invoices.', history });
    const available = compiler.effectiveWindow - compiler.budgets.headroom;
    expect(countTokens(messages)).toBeLessThanOrEqual(available);
    expect(report.tokens.total).toBe(countTokens(messages));
    expect(systemText(messages)).toContain(SUMMARY_HEADING);
    expect(systemText(messages)).toContain('Task: Turn 0:');
    const kept = messages.slice(1);
    // The verbatim part is the exact tail of the history: same objects, same order.
    expect(kept).toEqual(history.slice(history.length - kept.length));
    for (const [index, message] of kept.entries()) {
      expect(message).toBe(history[history.length - kept.length + index]);
    }
    expect(kept.length).toBeGreaterThan(10);
    expect(report.history.summarizedMessages + report.history.keptMessages).toBe(history.length);
    assertNoOrphans(kept);
  });

  it('never separates an AI tool call from its tool messages', async () => {
    const compiler = new ContextCompiler({ model: 'gpt-4o', contextLimit: 6_000 });
    for (const calls of [1, 3, 5]) {
      const history = conversation(60, { toolRounds: 2, callsPerRound: calls });
      const { messages } = await compiler.compile({ history, threadId: `calls-${calls}` });
      assertNoOrphans(messages.slice(1));
      expect(messages[1]?.getType()).not.toBe('tool');
    }
  });

  it('keeps the latest user message even when its own turn overflows the history budget', async () => {
    const compiler = new ContextCompiler({
      model: 'gpt-4o',
      contextLimit: 6_000,
      maxToolOutputTokens: 400,
    });
    const question = new HumanMessage('Reconcile every open invoice for Q3, please.');
    const work = conversation(1, { toolRounds: 40, toolWords: 120 }).slice(1);
    const history = [...conversation(5), question, ...work];
    const { messages } = await compiler.compile({ system: 'You reconcile invoices.', history });
    expect(messages[1]).toBe(question);
    expect(messages.at(-1)).toBe(history.at(-1));
    assertNoOrphans(messages.slice(2));
    expect(countTokens(messages)).toBeLessThanOrEqual(
      compiler.effectiveWindow - compiler.budgets.headroom,
    );
  });

  it('shortens oversize tool outputs to head + tail with a truncation marker, leaving the stored message alone', async () => {
    const compiler = new ContextCompiler({ model: 'gpt-4o', maxToolOutputTokens: 200 });
    const output = `BEGIN ${filler(1_500, 3)} END`;
    const tool = new ToolMessage({ content: output, tool_call_id: 'call_big', name: 'export' });
    const history = [
      new HumanMessage('Export the ledger.'),
      new AIMessage({ content: '', tool_calls: [{ id: 'call_big', name: 'export', args: {} }] }),
      tool,
    ];
    const { messages, report } = await compiler.compile({ history });
    const shortened = messages.at(-1) as ToolMessage;
    expect(shortened.tool_call_id).toBe('call_big');
    const text = shortened.content as string;
    expect(text.startsWith('BEGIN ')).toBe(true);
    expect(text.endsWith(' END')).toBe(true);
    const removed = Number(/\[truncated: (\d+) tokens\]/.exec(text)?.[1]);
    const [head, tail] = text.split(/\n\[truncated: \d+ tokens\]\n/);
    expect(encode(head!).length + removed + encode(tail!).length).toBeGreaterThanOrEqual(
      encode(output).length - 2,
    );
    expect(encode(text).length).toBeLessThanOrEqual(202);
    expect(tool.content).toBe(output);
    expect(report.truncated).toEqual([
      {
        index: 2,
        toolCallId: 'call_big',
        fromTokens: encode(output).length,
        toTokens: encode(text).length,
      },
    ]);
  });

  it('drops tool messages whose call is missing and reports them', async () => {
    const compiler = new ContextCompiler({ model: 'gpt-4o' });
    const history = [
      new HumanMessage('hi'),
      new ToolMessage({ content: 'stray', tool_call_id: 'nobody' }),
      new AIMessage('hello'),
    ];
    const { messages, report } = await compiler.compile({ history });
    expect(messages.map((message) => message.getType())).toEqual(['human', 'ai']);
    expect(report.dropped).toEqual([{ index: 1, reason: 'orphan_tool_message' }]);
  });

  it('moves system messages found in the history into the one leading system message', async () => {
    const compiler = new ContextCompiler({ model: 'gpt-4o' });
    const history = [new SystemMessage('Always answer in French.'), new HumanMessage('hi')];
    const { messages, report } = await compiler.compile({ system: 'You are polite.', history });
    expect(messages.map((message) => message.getType())).toEqual(['system', 'human']);
    expect(messages[0]!.content).toBe('You are polite.\n\nAlways answer in French.');
    expect(report.history.liftedSystemMessages).toBe(1);
  });

  it('appends a separately given query as the latest user message', async () => {
    const compiler = new ContextCompiler({ model: 'gpt-4o' });
    const history = conversation(2);
    const { messages } = await compiler.compile({ history, query: 'And the total?' });
    expect(messages.at(-1)).toBeInstanceOf(HumanMessage);
    expect(messages.at(-1)!.content).toBe('And the total?');
    expect(messages).toHaveLength(history.length + 1);
    expect(history).toHaveLength(conversation(2).length);
  });
});

describe('ContextCompiler memories and procedures', () => {
  it('packs memories by relevance per token, not by relevance alone', async () => {
    const compiler = new ContextCompiler({
      model: 'gpt-4o',
      contextLimit: 2_000,
      budgets: { memories: 0.1 },
    });
    // Memory budget: 10% of V_e 1,200 = 120 tokens; the long memory alone would take ~400.
    const memories = [
      { id: 'long', content: filler(300, 1), score: 0.95 },
      { id: 'short-a', content: 'Acme Suppliers is an approved vendor.', score: 0.6 },
      { id: 'short-b', content: 'Payments above $10,000 need two approvers.', score: 0.5 },
      { id: 'noise', content: 'The office plant needs water.', score: 0 },
    ];
    const { messages, report } = await compiler.compile({
      system: 'You pay invoices.',
      history: [new HumanMessage('Pay Acme')],
      memories,
    });
    expect(report.memories.included).toBe(2);
    expect(report.memories.excluded).toEqual([
      { index: 0, id: 'long', reason: 'budget' },
      { index: 3, id: 'noise', reason: 'not_relevant' },
    ]);
    expect(systemText(messages)).toContain(
      `${MEMORIES_HEADING}\n- Acme Suppliers is an approved vendor.\n- Payments above $10,000 need two approvers.`,
    );
    expect(report.tokens.memories).toBeLessThanOrEqual(120);
  });

  it('adds procedural memory to the system prompt under its own heading', async () => {
    const compiler = new ContextCompiler({ model: 'gpt-4o' });
    const { messages } = await compiler.compile({
      system: 'You pay invoices.',
      procedural: ['Screen every counterparty first.', 'Quote amounts with their currency.'],
      history: [new HumanMessage('Pay Acme')],
    });
    expect(messages[0]!.content).toBe(
      'You pay invoices.\n\n## Procedures\n- Screen every counterparty first.\n- Quote amounts with their currency.',
    );
  });
});

describe('ContextCompiler summaries', () => {
  it('reuses the cached summary on the next turn instead of summarising again', async () => {
    const summarizer = countingSummarizer();
    const compiler = new ContextCompiler({ model: 'gpt-4o', contextLimit: 8_000, summarizer });
    const history = conversation(100);
    const first = await compiler.compile({ history, threadId: 't' });
    expect(first.report.summary?.cache).toBe('miss');
    expect(summarizer.calls).toHaveLength(1);
    const next = await compiler.compile({
      history: [...history, ...conversation(1, { startAt: 100 })],
      threadId: 't',
    });
    expect(summarizer.calls).toHaveLength(1);
    expect(next.report.summary?.cache).toBe('hit');
    expect(next.report.cacheHit).toBe(true);
    expect(systemText(next.messages)).toBe(systemText(first.messages));
  });

  it('extends a cached summary with only the newly folded turns when history has grown', async () => {
    const summarizer = countingSummarizer();
    const compiler = new ContextCompiler({ model: 'gpt-4o', contextLimit: 8_000, summarizer });
    const history = conversation(100);
    await compiler.compile({ history, threadId: 't' });
    const longer = [...history, ...conversation(60, { startAt: 100 })];
    const result = await compiler.compile({ history: longer, threadId: 't' });
    expect(result.report.summary?.cache).toBe('extended');
    expect(summarizer.calls).toHaveLength(2);
    const second = summarizer.calls[1]!;
    expect(second.previousSummary).toBeDefined();
    // Only messages after the first summary's span are sent again.
    expect(second.messages.length).toBeLessThan(longer.length - history.length + 200);
    expect(second.messages[0]).not.toBe(longer[0]);
  });

  it('summarises again when a message inside the summarised span was changed', async () => {
    const summarizer = countingSummarizer();
    const compiler = new ContextCompiler({ model: 'gpt-4o', contextLimit: 8_000, summarizer });
    const history = conversation(100);
    await compiler.compile({ history, threadId: 't' });
    const edited = [new HumanMessage('Turn 0: a different first question?'), ...history.slice(1)];
    const result = await compiler.compile({ history: edited, threadId: 't' });
    expect(result.report.summary?.cache).toBe('miss');
    expect(summarizer.calls).toHaveLength(2);
  });

  it('keeps summaries of different threads apart', async () => {
    const summarizer = countingSummarizer();
    const compiler = new ContextCompiler({ model: 'gpt-4o', contextLimit: 8_000, summarizer });
    await compiler.compile({ history: conversation(100), threadId: 'a' });
    const other = await compiler.compile({ history: conversation(100), threadId: 'b' });
    expect(other.report.summary?.cache).toBe('miss');
  });

  it('summarises with a chat model through llmSummarizer', async () => {
    const model = scriptedModel(['SUMMARY: the user asked about 100 turns of invoices.'], {
      whenExhausted: 'repeat-last',
    });
    const compiler = new ContextCompiler({
      model: 'gpt-4o',
      contextLimit: 8_000,
      summarizer: llmSummarizer(model),
    });
    const { messages, report } = await compiler.compile({
      system: 'You pay invoices.',
      history: conversation(100),
    });
    expect(systemText(messages)).toContain(
      `${SUMMARY_HEADING}\nSUMMARY: the user asked about 100 turns of invoices.`,
    );
    expect(report.summary?.summarizer).toMatch(/^llm\//);
    const prompt = model.calls[0]!;
    expect(prompt[0]!.getType()).toBe('system');
    expect(prompt[1]!.content).toContain('User: Turn 0:');
    expect(prompt[1]!.content).toContain('Assistant called lookup({"turn":0,"round":0,"call":0})');
  });

  it('sends a long span to the summarising model in chunks, carrying the summary forward', async () => {
    const model = scriptedModel([(messages) => `summary after ${messages.length} messages`], {
      whenExhausted: 'repeat-last',
    });
    const summarizer = llmSummarizer(model, { maxInputTokens: 1_000 });
    const compiler = new ContextCompiler({ model: 'gpt-4o', contextLimit: 8_000, summarizer });
    await compiler.compile({ history: conversation(100) });
    expect(model.calls.length).toBeGreaterThan(3);
    expect(model.calls[1]![1]!.content).toContain('Summary so far:\nsummary after 2 messages');
    for (const call of model.calls)
      expect(countTokens(call[1]!.content as string)).toBeLessThan(1_200);
  });

  it('falls back to the extractive summary when the summarising model fails, and tries it again next turn', async () => {
    let failures = 0;
    const failing: Summarizer = {
      id: 'llm/broken',
      summarize: async () => {
        failures += 1;
        throw new Error('rate limited');
      },
    };
    const compiler = new ContextCompiler({
      model: 'gpt-4o',
      contextLimit: 8_000,
      summarizer: failing,
    });
    const first = await compiler.compile({ history: conversation(100), threadId: 't' });
    expect(first.report.summary?.fallbackReason).toBe('rate limited');
    expect(systemText(first.messages)).toContain('Task: Turn 0:');
    await compiler.compile({ history: conversation(100), threadId: 't' });
    expect(failures).toBe(2);
  });

  it('re-throws a LangGraph interrupt raised inside the summariser untouched', async () => {
    const interrupt = new GraphInterrupt([{ value: 'approve summary?' }]);
    const compiler = new ContextCompiler({
      model: 'gpt-4o',
      contextLimit: 8_000,
      summarizer: { id: 'interrupting', summarize: async () => Promise.reject(interrupt) },
    });
    await expect(compiler.compile({ history: conversation(100) })).rejects.toBe(interrupt);
  });
});

describe('ContextCompiler audit', () => {
  it('writes one context_compiled event per input, however often the same input is compiled', async () => {
    const audit = new AuditLog();
    const compiler = new ContextCompiler({ model: 'gpt-4o', contextLimit: 8_000, audit });
    const history = conversation(100);
    await compiler.compile({ history, threadId: 'thread-1' });
    await compiler.compile({ history, threadId: 'thread-1' });
    let events = await audit.events('thread-1');
    expect(events).toHaveLength(1);
    expect(events[0]!.type).toBe('context_compiled');
    expect(events[0]!.payload).toMatchObject({
      model: 'gpt-4o',
      effectiveWindow: 4_800,
      summary: { cache: 'miss', summarizer: 'extractive/v1/200' },
    });
    await compiler.compile({
      history: [...history, new HumanMessage('next')],
      threadId: 'thread-1',
    });
    events = await audit.events('thread-1');
    expect(events).toHaveLength(2);
    expect((await audit.verify('thread-1')).valid).toBe(true);
  });
});
