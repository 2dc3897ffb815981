import { createHmac } from 'node:crypto';
import { Annotation, END, MemorySaver, START, StateGraph } from '@langchain/langgraph';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AuditLog, canonicalJson } from '../../src/audit/index.js';
import {
  type ContextEnvelope,
  type ContextLedger,
  DEFAULT_ENVELOPE_TTL_MS,
  MemoryContextLedger,
  PostgresContextLedger,
  sealEnvelope,
  verifyEnvelope,
} from '../../src/context/index.js';
import { VeridexError } from '../../src/errors/index.js';
import { HandoffAnnotation, handoffNode } from '../../src/nodes/index.js';
import { describeEachDatabase } from '../support/databases.js';

const key = { id: 'agents-2026', secret: 'a-shared-secret-of-at-least-32-bytes!' };
const Order = z.strictObject({ instruction: z.string() });
const at = (iso: string) => () => new Date(iso);

describe('envelopes are bound to an audience and expire', () => {
  const sealed = (audience: Parameters<typeof sealEnvelope>[1]['audience'], ttlMs?: number) =>
    sealEnvelope(
      { instruction: 'approve refund 100 USD' },
      {
        version: 1,
        tokenBudget: 100,
        key,
        audience,
        now: at('2026-01-01T00:00:00.000Z'),
        ...(ttlMs ? { ttlMs } : {}),
      },
    );
  const now = at('2026-01-01T00:01:00.000Z');

  it('refuses an envelope presented to another ledger or another node', () => {
    expect(
      verifyEnvelope(sealed('thread-a'), { keys: [key], audience: 'thread-a', now }).valid,
    ).toBe(true);
    expect(
      verifyEnvelope(sealed('thread-a'), { keys: [key], audience: 'thread-b', now }),
    ).toMatchObject({ valid: false, reason: 'wrong_audience' });
    const forNode = sealed({ ledger: 'thread-a', node: 'payments' });
    expect(
      verifyEnvelope(forNode, {
        keys: [key],
        audience: { ledger: 'thread-a', node: 'payments' },
        now,
      }).valid,
    ).toBe(true);
    expect(
      verifyEnvelope(forNode, { keys: [key], audience: { ledger: 'thread-a', node: 'chat' }, now }),
    ).toMatchObject({ reason: 'wrong_audience' });
    expect(verifyEnvelope(forNode, { keys: [key], audience: 'thread-a', now })).toMatchObject({
      reason: 'wrong_audience',
    });
  });

  it('signs the audience: rewriting it breaks the signature', () => {
    const moved = { ...sealed('thread-a'), audience: { ledger: 'thread-b' } };
    expect(verifyEnvelope(moved, { keys: [key], audience: 'thread-b', now })).toMatchObject({
      reason: 'signature_mismatch',
    });
    const extended = { ...sealed('thread-a'), expiresAt: '2099-01-01T00:00:00.000Z' };
    expect(verifyEnvelope(extended, { keys: [key], audience: 'thread-a', now })).toMatchObject({
      reason: 'signature_mismatch',
    });
  });

  it('expires after 15 minutes by default, or after its own ttlMs', () => {
    expect(DEFAULT_ENVELOPE_TTL_MS).toBe(900_000);
    const envelope = sealed('thread-a');
    expect(envelope.expiresAt).toBe('2026-01-01T00:15:00.000Z');
    const later = at('2026-01-01T00:15:00.001Z');
    expect(
      verifyEnvelope(envelope, { keys: [key], audience: 'thread-a', now: later }),
    ).toMatchObject({
      reason: 'expired',
    });
    const long = sealed('thread-a', 3_600_000);
    expect(verifyEnvelope(long, { keys: [key], audience: 'thread-a', now: later }).valid).toBe(
      true,
    );
  });

  it('refuses to seal without an audience, and refuses a v1 envelope bound to none', () => {
    try {
      sealEnvelope({}, { version: 1, tokenBudget: 10, key, audience: '' });
      expect.unreachable();
    } catch (error) {
      expect(VeridexError.is(error, 'config_invalid')).toBe(true);
    }
    // What main sealed before audiences existed: a valid v1 MAC, bound to no thread.
    const unsigned = {
      version: 1,
      timestamp: '2026-01-01T00:00:00.000Z',
      tokenBudget: 100,
      keyId: key.id,
      payload: { instruction: 'x' },
    };
    const v1 = {
      ...unsigned,
      signature: createHmac('sha256', key.secret)
        .update(canonicalJson({ format: 'veridex.envelope/v1', ...unsigned }))
        .digest('base64'),
    };
    expect(verifyEnvelope(v1, { keys: [key], audience: 'thread-a', now })).toMatchObject({
      reason: 'malformed',
    });
  });
});

const State = Annotation.Root({ ...HandoffAnnotation.spec, done: Annotation<string>() });

/** sender (seals for this thread) → receive (handoffNode) → act; or the attacker's injected envelope. */
function graph(ledger: ContextLedger, audit: AuditLog) {
  return new StateGraph(State)
    .addNode('sender', async (state, config) => {
      if (state.envelope) return {}; // an envelope was injected into this thread's input
      const threadId = String(config.configurable?.thread_id);
      return {
        envelope: sealEnvelope(
          { instruction: `refund for ${threadId}` },
          {
            version: await ledger.nextVersion(threadId),
            tokenBudget: 100,
            key,
            audience: threadId,
          },
        ),
      };
    })
    .addNode(
      'receive',
      handoffNode({ schema: Order, keys: [key], onInvalid: 'fail', ledger, audit }),
    )
    .addNode('act', (state) => ({ done: (state.context as z.infer<typeof Order>).instruction }))
    .addEdge(START, 'sender')
    .addEdge('sender', 'receive')
    .addEdge('receive', 'act')
    .addEdge('act', END)
    .compile({ checkpointer: new MemorySaver() });
}

function replaySuite(makeLedger: () => ContextLedger, prefix: () => string) {
  it('refuses an envelope captured in one thread and replayed into another', async () => {
    const ledger = makeLedger();
    const audit = new AuditLog();
    const app = graph(ledger, audit);
    const [a, b] = [`${prefix()}-a`, `${prefix()}-b`];
    const first = await app.invoke({}, { configurable: { thread_id: a } });
    expect(first.done).toBe(`refund for ${a}`);
    const captured = first.envelope as ContextEnvelope;

    const error = await app
      .invoke({ envelope: captured }, { configurable: { thread_id: b } })
      .catch((caught: unknown) => caught);
    expect(VeridexError.is(error, 'envelope_invalid')).toBe(true);
    expect((error as VeridexError).details.reason).toBe('wrong_audience');
    expect(await ledger.list(b)).toHaveLength(0);
    const events = await audit.events(b);
    expect(events.map((event) => event.type)).toEqual(['handoff_rejected', 'security_event']);
    expect(events[1]!.payload).toMatchObject({ kind: 'envelope_replay', reason: 'wrong_audience' });
  });
}

describe('replay across threads, in-memory ledger', () =>
  replaySuite(
    () => new MemoryContextLedger(),
    () => 'memory',
  ));
describeEachDatabase('replay across threads, database ledger', ({ db, backend }) =>
  replaySuite(
    () => new PostgresContextLedger(db()),
    () => `${backend}-${Date.now()}`,
  ),
);
