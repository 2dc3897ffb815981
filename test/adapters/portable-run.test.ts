import { readFileSync } from 'node:fs';
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
import { Ajv2020 } from 'ajv/dist/2020.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  checkpointReader,
  exportThread,
  fromPortableMessage,
  importThread,
  type PortableRun,
  toPortableMessage,
} from '../../src/adapters/index.js';
import { AuditLog, canonicalJson } from '../../src/audit/index.js';
import { VeridexError } from '../../src/errors/index.js';

const State = Annotation.Root({
  ...MessagesAnnotation.spec,
  ticket: Annotation<string | undefined>,
});

function buildGraph(options: { toolsFirst?: boolean } = {}) {
  const graph = new StateGraph(State)
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
    });
  if (!options.toolsFirst) {
    return graph
      .addEdge(START, 'model')
      .addEdge('model', 'tools')
      .addEdge('tools', END)
      .compile({ checkpointer: new MemorySaver() });
  }
  // A graph whose edges differ from the source's: the model hands over to a review node.
  return graph
    .addNode('review', () => ({}))
    .addEdge(START, 'model')
    .addEdge('model', 'review')
    .addEdge('review', 'tools')
    .addEdge('tools', END)
    .compile({ checkpointer: new MemorySaver() });
}

/** The shipped schema, compiled by our own Ajv instance (not the library's). */
const validateRun = new Ajv2020({ strict: true, allErrors: true }).compile(
  JSON.parse(readFileSync(new URL('../../schemas/run-v1.schema.json', import.meta.url), 'utf8')),
);

async function suspendedThread(threadId = 't1') {
  const source = buildGraph();
  const audit = new AuditLog();
  for (const type of ['run_started', 'turn_started'] as const) {
    await audit.append({ threadId, type, payload: { n: type.length } });
  }
  await source.invoke(
    { messages: [new SystemMessage('be careful'), new HumanMessage('pay INV-1')] },
    { configurable: { thread_id: threadId } },
  );
  return { source, audit, run: await exportThread(source, threadId, { audit }) };
}

describe('exportThread / importThread', () => {
  it('moves a suspended thread to another checkpointer and resumes it there', async () => {
    const { run } = await suspendedThread();
    const json = JSON.parse(canonicalJson(run));
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
    expect(json.pending).toEqual({ next: ['tools'], resumeAs: 'model', approvals: [] });
    expect(json.audit.eventCount).toBe(2);
    expect(json.audit.headHash).toBe(json.audit.events[1].hash);

    const target = buildGraph();
    const audit = new AuditLog();
    const result = await importThread(target, json, { audit });
    expect(result.auditEvents).toBe(2);
    expect(await audit.events('t1')).toEqual(run.audit!.events);
    const imported = await target.getState({ configurable: { thread_id: 't1' } });
    expect(imported.values.ticket).toBe('INV-1');
    expect(imported.next).toEqual(['tools']);
    // The waiting node runs again and raises its interrupt; resuming completes the run.
    const suspended = await target.invoke(null, { configurable: { thread_id: 't1' } });
    expect((suspended as { __interrupt__?: unknown[] }).__interrupt__).toHaveLength(1);
    const done = await target.invoke(new Command({ resume: { decision: 'approved' } }), {
      configurable: { thread_id: 't1' },
    });
    expect(done.messages.at(-1)?.content).toBe('transfer approved');
  });

  it('writes documents the shipped JSON Schema accepts, and an import exports the same bytes', async () => {
    const { run } = await suspendedThread();
    expect(validateRun(JSON.parse(canonicalJson(run))), JSON.stringify(validateRun.errors)).toBe(
      true,
    );
    const target = buildGraph();
    const audit = new AuditLog();
    await importThread(target, JSON.parse(canonicalJson(run)), { audit });
    expect(canonicalJson(await exportThread(target, 't1', { audit }))).toBe(canonicalJson(run));
  });

  it('reads the same document from the checkpointer alone as from the compiled graph', async () => {
    const { source, audit, run } = await suspendedThread();
    const reader = checkpointReader(source.checkpointer as MemorySaver);
    expect(canonicalJson(await exportThread(reader, 't1', { audit }))).toBe(canonicalJson(run));
  });

  it('rejects documents that are not veridex.run/v1, saying where', async () => {
    const { run } = await suspendedThread();
    // biome-ignore lint/suspicious/noExplicitAny: the edits reach into an untyped JSON document.
    const broken: Array<[string, (doc: Record<string, any>) => void]> = [
      ['/messages/0', (doc) => (doc.messages[0].role = 'wizard')],
      ['/messages/1', (doc) => (doc.messages[1].toolCalls = [])],
      ['(root)', (doc) => (doc.exportedAt = 'now')],
      ['/audit/events/0/hash', (doc) => (doc.audit.events[0].hash = 'not-a-hash')],
      ['/pending', (doc) => delete doc.pending.next],
    ];
    for (const [where, edit] of broken) {
      const doc = JSON.parse(canonicalJson(run));
      edit(doc);
      expect(validateRun(doc), where).toBe(false);
      const error = await importThread(buildGraph(), doc).catch((caught: unknown) => caught);
      expect(VeridexError.is(error, 'import_invalid'), where).toBe(true);
      expect((error as Error).message).toContain(where);
    }
    const other = await importThread(buildGraph(), { format: 'veridex.run/v2' }).catch(
      (caught: unknown) => caught,
    );
    expect((other as Error).message).toMatch(/^Not a veridex\.run\/v1 document/);
  });

  it('refuses an edited, truncated or re-ordered audit chain before writing anything', async () => {
    const { run } = await suspendedThread();
    const tamper: Array<(doc: PortableRun) => void> = [
      (doc) => (doc.audit!.events[0]!.payload = { n: 99 }),
      (doc) => doc.audit!.events.shift(),
      (doc) => doc.audit!.events.reverse(),
      (doc) => (doc.audit!.eventCount = 1),
      (doc) => (doc.audit!.headHash = doc.audit!.events[0]!.hash),
      (doc) => (doc.audit!.events[1]!.threadId = 'elsewhere'),
    ];
    for (const edit of tamper) {
      const doc = structuredClone(run);
      edit(doc);
      const target = buildGraph();
      const audit = new AuditLog();
      const error = await importThread(target, doc, { audit }).catch((caught: unknown) => caught);
      expect(VeridexError.is(error, 'audit_chain_broken'), String(edit)).toBe(true);
      expect(await audit.events('t1')).toEqual([]);
      expect((await target.getState({ configurable: { thread_id: 't1' } })).next).toEqual([]);
    }
  });

  it('keeps nothing when the target graph would run other nodes next', async () => {
    const { run } = await suspendedThread();
    const other = buildGraph({ toolsFirst: true });
    const audit = new AuditLog();
    const error = await importThread(other, run, { audit }).catch((caught: unknown) => caught);
    expect(VeridexError.is(error, 'import_invalid')).toBe(true);
    expect((error as Error).message).toContain('[review]');
    expect((await other.getState({ configurable: { thread_id: 't1' } })).values).toEqual({});
    expect(await audit.events('t1')).toEqual([]);
  });

  it('refuses to overwrite a thread, and to move an audit chain to another thread id', async () => {
    const { run } = await suspendedThread();
    const target = buildGraph();
    await importThread(target, run, { importAudit: false });
    const again = await importThread(target, run, { importAudit: false }).catch((e: unknown) => e);
    expect(VeridexError.is(again, 'import_conflict')).toBe(true);
    const renamed = await importThread(buildGraph(), run, { threadId: 'copy' }).catch(
      (e: unknown) => e,
    );
    expect(VeridexError.is(renamed, 'config_invalid')).toBe(true);
    const copy = await importThread(buildGraph(), run, { threadId: 'copy', importAudit: false });
    expect(copy.threadId).toBe('copy');
  });

  it('carries the memory delta: working memory out of the state, long-term writes from the audit chain', async () => {
    const Memory = Annotation.Root({
      ...MessagesAnnotation.spec,
      workingMemory: Annotation<Array<{ content: string }>>({
        reducer: (current, update) => [...current, ...update],
        default: () => [],
      }),
    });
    const build = () =>
      new StateGraph(Memory)
        .addNode('note', () => ({ workingMemory: [{ content: 'customer prefers email' }] }))
        .addNode('wait', () => {
          interrupt('continue?');
          return {};
        })
        .addEdge(START, 'note')
        .addEdge('note', 'wait')
        .addEdge('wait', END)
        .compile({ checkpointer: new MemorySaver() });
    const audit = new AuditLog();
    const written = {
      recordId: 'mem_1',
      writeId: 'w1',
      tier: 'semantic',
      namespace: ['crm'],
      key: 'contact-channel',
      version: 1,
      contentHash: 'c'.repeat(64),
      status: 'written',
      source: 'user',
    };
    await audit.append({ threadId: 'm', type: 'memory_written', payload: written });
    await audit.append({
      threadId: 'm',
      type: 'memory_invalidated',
      payload: { recordId: 'mem_0', key: 'contact-channel', version: 0, reason: 'superseded' },
    });
    // The delta lists what identifies the write, not its provenance claims.
    const { source: _claimed, ...exportedWrite } = written;
    const source = build();
    await source.invoke(
      { messages: [new HumanMessage('hi')] },
      { configurable: { thread_id: 'm' } },
    );
    const run = await exportThread(source, 'm', { audit });
    expect(run.state).toEqual({});
    expect(run.memory).toEqual({
      working: [{ content: 'customer prefers email' }],
      written: [exportedWrite],
      invalidated: [
        { recordId: 'mem_0', key: 'contact-channel', version: 0, reason: 'superseded' },
      ],
    });
    expect(validateRun(JSON.parse(canonicalJson(run)))).toBe(true);
    const target = build();
    const targetAudit = new AuditLog();
    await importThread(target, run, { audit: targetAudit });
    const state = await target.getState({ configurable: { thread_id: 'm' } });
    expect(state.values.workingMemory).toEqual([{ content: 'customer prefers email' }]);
    expect(canonicalJson(await exportThread(target, 'm', { audit: targetAudit }))).toBe(
      canonicalJson(run),
    );
  });

  it('says so when the thread to export does not exist', async () => {
    const error = await exportThread(buildGraph(), 'nobody').catch((caught: unknown) => caught);
    expect(VeridexError.is(error, 'run_not_found')).toBe(true);
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
