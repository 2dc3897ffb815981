import { AIMessage, HumanMessage, SystemMessage, ToolMessage } from '@langchain/core/messages';
import {
  Annotation,
  Command,
  END,
  interrupt,
  MemorySaver,
  MessagesAnnotation,
  START,
  StateGraph,
} from '@langchain/langgraph';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  exportThread,
  fromPortableMessage,
  importThread,
  toPortableMessage,
} from '../../src/adapters/index.js';
import { AuditLog } from '../../src/audit/index.js';
import { VeridexError } from '../../src/errors/index.js';

const State = Annotation.Root({
  ...MessagesAnnotation.spec,
  ticket: Annotation<string | undefined>,
});

function buildGraph() {
  return new StateGraph(State)
    .addNode('model', () => ({
      messages: [
        new AIMessage({
          content: '',
          tool_calls: [
            { id: 'call_1', name: 'transfer', args: { amount: '5.00' }, type: 'tool_call' },
          ],
        }),
      ],
      ticket: 'INV-1',
    }))
    .addNode('tools', () => {
      const decision = interrupt({ approvals: [{ approvalId: 'apr_1' }] }) as { decision: string };
      return {
        messages: [
          new ToolMessage({
            content: `transfer ${decision.decision}`,
            tool_call_id: 'call_1',
            name: 'transfer',
          }),
        ],
      };
    })
    .addEdge(START, 'model')
    .addEdge('model', 'tools')
    .addEdge('tools', END)
    .compile({ checkpointer: new MemorySaver() });
}

describe('exportThread / importThread', () => {
  it('moves a suspended thread to another checkpointer and resumes it there', async () => {
    const source = buildGraph();
    const audit = new AuditLog();
    await audit.append({ threadId: 't1', type: 'run_started', payload: {} });
    await source.invoke(
      { messages: [new SystemMessage('be careful'), new HumanMessage('pay INV-1')] },
      { configurable: { thread_id: 't1' } },
    );

    const run = await exportThread(source, 't1', { audit });
    const json = JSON.parse(JSON.stringify(run));
    expect(json.format).toBe('veridex.run/v1');
    expect(json.messages.map((message: { role: string }) => message.role)).toEqual([
      'system',
      'user',
      'assistant',
    ]);
    expect(json.messages[2].toolCalls).toEqual([
      { id: 'call_1', name: 'transfer', arguments: { amount: '5.00' } },
    ]);
    expect(json.state).toEqual({ ticket: 'INV-1' });
    expect(json.pending.next).toEqual(['tools']);
    expect(json.pending.interrupts[0].value).toEqual({ approvals: [{ approvalId: 'apr_1' }] });
    expect(json.audit.events).toHaveLength(1);

    const target = buildGraph();
    await importThread(target, json, { threadId: 'copy', asNode: 'model' });
    const imported = await target.getState({ configurable: { thread_id: 'copy' } });
    expect(imported.values.ticket).toBe('INV-1');
    expect(imported.next).toEqual(['tools']);
    // The waiting node runs again and raises its interrupt; resuming completes the run.
    const suspended = await target.invoke(null, { configurable: { thread_id: 'copy' } });
    expect((suspended as { __interrupt__?: unknown[] }).__interrupt__).toHaveLength(1);
    const done = await target.invoke(new Command({ resume: { decision: 'approved' } }), {
      configurable: { thread_id: 'copy' },
    });
    expect(done.messages.at(-1)?.content).toBe('transfer approved');
  });

  it('rejects a document that is not a portable run, saying why', async () => {
    const error = await importThread(buildGraph(), {
      format: 'veridex.run/v1',
      threadId: 't',
      messages: [{ role: 'wizard' }],
      state: {},
    }).catch((caught: unknown) => caught);
    expect(VeridexError.is(error, 'import_invalid')).toBe(true);
    expect((error as Error).message).toContain('messages.0');
  });

  it('round-trips messages through the portable form (property)', () => {
    const text = fc.string();
    const args = fc.dictionary(fc.string({ minLength: 1 }), fc.jsonValue());
    const message = fc.oneof(
      text.map((content) => new SystemMessage(content)),
      fc
        .tuple(text, fc.option(fc.string({ minLength: 1 }), { nil: undefined }))
        .map(([content, name]) => new HumanMessage({ content, ...(name ? { name } : {}) })),
      fc
        .tuple(
          text,
          fc.array(fc.tuple(fc.string({ minLength: 1 }), fc.string({ minLength: 1 }), args), {
            maxLength: 3,
          }),
        )
        .map(
          ([content, calls]) =>
            new AIMessage({
              content,
              tool_calls: calls.map(([id, name, callArgs]) => ({
                id,
                name,
                args: callArgs,
                type: 'tool_call' as const,
              })),
            }),
        ),
      fc
        .tuple(
          text,
          fc.string({ minLength: 1 }),
          fc.constantFrom('success' as const, 'error' as const),
        )
        .map(([content, id, status]) => new ToolMessage({ content, tool_call_id: id, status })),
    );
    fc.assert(
      fc.property(message, (original) => {
        const portable = JSON.parse(JSON.stringify(toPortableMessage(original)));
        const back = fromPortableMessage(portable);
        expect(back.getType()).toBe(original.getType());
        expect(back.content).toEqual(original.content);
        expect(JSON.parse(JSON.stringify(toPortableMessage(back)))).toEqual(portable);
      }),
    );
  });
});
