import { AIMessage, type BaseMessage, HumanMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { Annotation, MemorySaver, MessagesAnnotation, StateGraph } from '@langchain/langgraph';
import { createReactAgent } from '@langchain/langgraph/prebuilt';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AuditLog } from '../../src/audit/index.js';
import {
  ContextCompiler,
  type ContextReport,
  countTokens,
  SUMMARY_HEADING,
} from '../../src/context/index.js';
import { contextNode } from '../../src/nodes/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { assertNoOrphans, conversation, filler } from './fixtures.js';

const lookup = tool(async ({ id }) => `record ${id}: ${filler(80, id)}`, {
  name: 'lookup',
  description: 'Looks up a ledger record by id.',
  schema: z.object({ id: z.number() }),
});

/** Calls `lookup` once after each user message, then answers; tool call ids are unique. */
function toolThenAnswerModel() {
  let calls = 0;
  return scriptedModel(
    [
      (messages) => {
        const last = messages.at(-1)!;
        if (last.getType() === 'tool') return `Done: ${String(last.content).slice(0, 20)}`;
        calls += 1;
        return new AIMessage({
          content: '',
          tool_calls: [{ id: `lookup_${calls}`, name: 'lookup', args: { id: calls } }],
        });
      },
    ],
    { whenExhausted: 'repeat-last' },
  );
}

describe('contextNode as a createReactAgent pre-model hook', () => {
  it('sends the model the compiled messages while the stored history keeps every message', async () => {
    const compiler = new ContextCompiler({ model: 'gpt-4o', contextLimit: 8_000 });
    const audit = new AuditLog();
    const auditedCompiler = new ContextCompiler({ model: 'gpt-4o', contextLimit: 8_000, audit });
    const model = toolThenAnswerModel();
    const agent = createReactAgent({
      llm: model,
      tools: [lookup],
      preModelHook: contextNode(auditedCompiler, {
        system: 'You reconcile ledgers.',
        tools: [lookup],
      }),
      checkpointer: new MemorySaver(),
    });
    const history = conversation(100);
    const question = new HumanMessage('What does record 1 say?');
    const config = { configurable: { thread_id: 'ledger-7' } };
    const result = await agent.invoke({ messages: [...history, question] }, config);

    // Stored history: everything, untouched and in order, plus the new tool round and answer.
    const stored = result.messages as BaseMessage[];
    expect(stored).toHaveLength(history.length + 4);
    expect(stored.slice(0, history.length).map((message) => message.content)).toEqual(
      history.map((message) => message.content),
    );
    expect(stored.map((message) => message.getType()).slice(-3)).toEqual(['ai', 'tool', 'ai']);

    // What the model saw: one system message with a summary, a short verbatim tail, within V_e.
    expect(model.calls).toHaveLength(2);
    for (const call of model.calls) {
      expect(call[0]!.getType()).toBe('system');
      expect(call[0]!.content as string).toContain(SUMMARY_HEADING);
      expect(call.length).toBeLessThan(history.length / 2);
      expect(countTokens(call)).toBeLessThanOrEqual(
        compiler.effectiveWindow - compiler.budgets.headroom,
      );
      assertNoOrphans(call.slice(1));
    }
    expect(model.calls[0]!.at(-1)!.content).toBe('What does record 1 say?');
    expect(model.calls[1]!.at(-1)!.getType()).toBe('tool');
    expect(model.calls[1]!.some((message) => message.content === 'What does record 1 say?')).toBe(
      true,
    );

    const events = await audit.events('ledger-7');
    expect(events.map((event) => event.type)).toEqual(['context_compiled', 'context_compiled']);
    expect((events[1]!.payload as unknown as ContextReport).summary?.cache).toBe('hit');
  });

  it('works as a plain function inside your own model node, and can write its report to state', async () => {
    const compiler = new ContextCompiler({ model: 'gpt-4o', contextLimit: 8_000 });
    const compile = contextNode<{ messages: BaseMessage[] }>(compiler, {
      system: (state) => `You answer in ${state.messages.length} words or fewer.`,
      memories: async () => [{ id: 'm1', content: 'The user is the CFO of Acme.', score: 0.8 }],
      reportKey: 'contextReport',
    });
    const model = scriptedModel(['Noted.'], { whenExhausted: 'repeat-last' });
    const State = Annotation.Root({
      ...MessagesAnnotation.spec,
      contextReport: Annotation<ContextReport | undefined>(),
    });
    const graph = new StateGraph(State)
      .addNode('agent', async (state, config) => {
        const { llmInputMessages, contextReport } = await compile(state, config);
        return {
          messages: [await model.invoke(llmInputMessages)],
          contextReport: contextReport as ContextReport,
        };
      })
      .addEdge('__start__', 'agent')
      .compile({ checkpointer: new MemorySaver() });
    const history = conversation(100);
    const result = await graph.invoke(
      { messages: history },
      { configurable: { thread_id: 'own-node' } },
    );
    expect(result.messages).toHaveLength(history.length + 1);
    const seen = model.calls[0]!;
    expect(seen[0]!.content as string).toMatch(/^You answer in 400 words or fewer\./);
    expect(seen[0]!.content as string).toContain('- The user is the CFO of Acme.');
    expect(seen.length).toBeLessThan(history.length);
    expect(result.contextReport?.history.inputMessages).toBe(history.length);
    expect(result.contextReport?.memories.included).toBe(1);
  });
});
