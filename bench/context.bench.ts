import {
  AIMessage,
  type BaseMessage,
  HumanMessage,
  SystemMessage,
  ToolMessage,
  trimMessages,
} from '@langchain/core/messages';
import { ContextCompiler, countTokens } from '../src/context/index.js';
import { median, ms, timeRepeated } from './stats.js';

const SYSTEM =
  'You are a treasury assistant. Reconcile invoices, check balances and explain every step.';
const MESSAGES = 5_000;
const RUNS = 7;

/** A seeded generator of varied, word-like text, so the tokenizer's merge cache is not flattered. */
function textGenerator(seed: number) {
  let state = seed;
  const next = () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state;
  };
  const syllables = [
    'ka',
    'lo',
    'mi',
    'ren',
    'sto',
    'val',
    'qui',
    'dex',
    'pra',
    'zu',
    'ne',
    'tor',
    'bri',
    'an',
    'ur',
    'es',
  ];
  const word = () => {
    let result = '';
    for (let count = 1 + (next() % 3); count > 0; count--)
      result += syllables[next() % syllables.length];
    return result;
  };
  return (words: number): string => {
    const parts: string[] = [];
    for (let index = 0; index < words; index++) {
      parts.push(index % 9 === 8 ? String(next() % 100_000) : word());
    }
    return parts.join(' ');
  };
}

/** 5,000 messages: 1,250 turns of question, tool call, tool result (JSON) and answer, with stable ids. */
function buildHistory(): BaseMessage[] {
  const text = textGenerator(42);
  const history: BaseMessage[] = [];
  for (let turn = 0; history.length < MESSAGES; turn++) {
    const callId = `call_${turn}`;
    history.push(
      new HumanMessage({ id: `m${history.length}`, content: `Question ${turn}: ${text(25)}?` }),
    );
    history.push(
      new AIMessage({
        id: `m${history.length}`,
        content: '',
        tool_calls: [
          {
            id: callId,
            name: 'lookup_invoice',
            args: { invoice: `INV-${turn}`, fields: ['amount', 'status'] },
          },
        ],
      }),
    );
    history.push(
      new ToolMessage({
        id: `m${history.length}`,
        tool_call_id: callId,
        name: 'lookup_invoice',
        content: JSON.stringify({
          invoice: `INV-${turn}`,
          amount: `${turn * 37}.00`,
          status: 'open',
          note: text(40),
        }),
      }),
    );
    history.push(
      new AIMessage({ id: `m${history.length}`, content: `Answer ${turn}: ${text(35)}.` }),
    );
  }
  return history;
}

/** The same history as new message objects (what a checkpointer hands back on every turn). */
function copyOf(history: readonly BaseMessage[]): BaseMessage[] {
  return history.map((message) => {
    const fields = { id: message.id!, content: message.content };
    if (message instanceof ToolMessage)
      return new ToolMessage({
        ...fields,
        tool_call_id: message.tool_call_id,
        name: message.name!,
      });
    if (message instanceof AIMessage)
      return new AIMessage({ ...fields, tool_calls: message.tool_calls ?? [] });
    return new HumanMessage(fields);
  });
}

/** `npm run bench -- context`: compile a 5,000-message history; compare with trimMessages. */
export async function run(): Promise<void> {
  const history = buildHistory();
  const bytes = history.reduce((sum, message) => sum + JSON.stringify(message.content).length, 0);
  const totalTokens = countTokens(copyOf(history));
  console.log(
    `history: ${history.length} messages, ${(bytes / 1e6).toFixed(2)} MB of content, ${totalTokens} tokens (o200k)`,
  );
  const options = { model: 'gpt-4o' } as const;

  // Cold: new compiler (empty summary cache), new message objects (nothing counted yet).
  const coldInputs = Array.from({ length: RUNS }, () => copyOf(history));
  let report = (
    await new ContextCompiler(options).compile({ system: SYSTEM, history: copyOf(history) })
  ).report;
  const cold = median(
    await timeRepeated(RUNS, () =>
      new ContextCompiler(options).compile({ system: SYSTEM, history: coldInputs.pop()! }),
    ),
  );

  // Per turn: the thread's summary is cached, but the checkpointer hands back new objects.
  const compiler = new ContextCompiler(options);
  await compiler.compile({ system: SYSTEM, history: copyOf(history), threadId: 'bench' });
  const turnInputs = Array.from({ length: RUNS }, () => copyOf(history));
  const perTurn = median(
    await timeRepeated(RUNS, async () => {
      report = (
        await compiler.compile({ system: SYSTEM, history: turnInputs.pop()!, threadId: 'bench' })
      ).report;
    }),
  );
  if (report.summary?.cache !== 'hit')
    throw new Error(`expected a summary cache hit, got ${report.summary?.cache}`);

  // Hot: the same message objects again (several model calls within one run).
  const same = copyOf(history);
  await compiler.compile({ system: SYSTEM, history: same, threadId: 'bench' });
  const hot = median(
    await timeRepeated(RUNS, () =>
      compiler.compile({ system: SYSTEM, history: same, threadId: 'bench' }),
    ),
  );

  // LangChain's trimMessages on the same history and the same input budget, with a real
  // (gpt-tokenizer, per-message cached) token counter: its search calls the counter on every
  // candidate prefix, so a counter without a cache would take minutes here.
  const budget = compiler.effectiveWindow - compiler.budgets.headroom;
  const trimInputs = Array.from({ length: RUNS }, () => [
    new SystemMessage(SYSTEM),
    ...copyOf(history),
  ]);
  let kept = 0;
  const trim = median(
    await timeRepeated(RUNS, async () => {
      const trimmed = await trimMessages(trimInputs.pop()!, {
        maxTokens: budget,
        strategy: 'last',
        includeSystem: true,
        startOn: 'human',
        tokenCounter: (messages) => countTokens(messages),
      });
      kept = trimmed.length;
    }),
  );

  console.log(
    `compile (cold: new compiler, new objects)      p50 ${ms(cold)} ms\n` +
      `compile (per turn: cached summary, new objects) p50 ${ms(perTurn)} ms — kept ${report.history.keptMessages}, summarised ${report.history.summarizedMessages}, ${report.tokens.total} tokens\n` +
      `compile (hot: same objects)                     p50 ${ms(hot)} ms\n` +
      `trimMessages (same budget ${budget})            p50 ${ms(trim)} ms — kept ${kept} (older turns dropped, no summary)`,
  );
  console.log(
    `RESULT context compile_5k_ms=${ms(perTurn)} trim_5k_ms=${ms(trim)} compile_cold_5k_ms=${ms(cold)} compile_hot_5k_ms=${ms(hot)}`,
  );
}
