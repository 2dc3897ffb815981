import { describe, expect, it } from 'vitest';
import {
  AuditLog,
  type AuditStore,
  deriveEventId,
  GENESIS_HASH,
  MemoryAuditStore,
  PostgresAuditStore,
  SecretScrubber,
  verbatimDigests,
  verifyChain,
} from '../../src/audit/index.js';
import { VeridexError } from '../../src/errors/index.js';
import { describeEachDatabase } from '../support/databases.js';

function auditContract(
  name: string,
  makeStore: () => AuditStore,
  open?: () => Promise<AuditStore>,
): void {
  describe(name, () => {
    it('chains events from the genesis hash', async () => {
      const audit = new AuditLog({ store: makeStore() });
      const first = await audit.append({
        threadId: 't1',
        type: 'run_started',
        payload: { prompt: 'hi' },
      });
      const second = await audit.append({ threadId: 't1', type: 'run_completed', payload: {} });
      expect(first.previousEventHash).toBe(GENESIS_HASH);
      expect(second.previousEventHash).toBe(first.hash);
      expect(await audit.verify('t1')).toEqual({ valid: true, length: 2, head: second.hash });
    });

    it('treats a re-append of a known event id as a no-op (replay safety)', async () => {
      const audit = new AuditLog({ store: makeStore() });
      const eventId = deriveEventId('t1', 'tool_executed', 'call_1');
      const first = await audit.append({
        threadId: 't1',
        eventId,
        type: 'tool_executed',
        payload: { n: 1 },
      });
      const again = await audit.append({
        threadId: 't1',
        eventId,
        type: 'tool_executed',
        payload: { n: 2 },
      });
      expect(again).toEqual(first);
      expect(await audit.events('t1')).toHaveLength(1);
    });

    it('keeps each thread its own chain', async () => {
      const audit = new AuditLog({ store: makeStore() });
      await audit.append({ threadId: 'a', type: 'run_started', payload: {} });
      const b = await audit.append({ threadId: 'b', type: 'run_started', payload: {} });
      expect(b.previousEventHash).toBe(GENESIS_HASH);
      expect(await audit.events('a')).toHaveLength(1);
    });

    it('appends a batch atomically and in order', async () => {
      const audit = new AuditLog({ store: makeStore() });
      const events = await audit.appendMany([
        { threadId: 't', type: 'tool_proposed', payload: { i: 1 } },
        { threadId: 't', type: 'policy_decision', payload: { i: 2 } },
        { threadId: 't', type: 'tool_executed', payload: { i: 3 } },
      ]);
      expect(events.map((event) => event.payload.i)).toEqual([1, 2, 3]);
      expect((await audit.events('t')).map((event) => event.hash)).toEqual(
        events.map((event) => event.hash),
      );
    });

    it('never stores a registered secret or a credential-shaped string', async () => {
      const scrubber = new SecretScrubber();
      scrubber.register('STRIPE_KEY', 'opaque-value-123456');
      const audit = new AuditLog({ store: makeStore(), scrubber });
      await audit.append({
        threadId: 't',
        type: 'tool_failed',
        payload: {
          error: 'call with opaque-value-123456 failed',
          env: 'DATABASE_URL=postgres://app:hunter2hunter2@db:5432/prod',
          token: 'ghp_abcdefghijklmnopqrstuvwxyz0123456789',
        },
      });
      const [stored] = await audit.events('t');
      const text = JSON.stringify(stored);
      expect(text).not.toContain('opaque-value-123456');
      expect(text).not.toContain('hunter2hunter2');
      expect(text).not.toContain('ghp_abcdefghijklmnopqrstuvwxyz0123456789');
      expect(text).toContain('[REDACTED:STRIPE_KEY]');
      expect(text).toContain('[REDACTED:connection_string_password]');
      expect(text).toContain('[REDACTED:github_token]');
    });

    it('rejects a payload that cannot be canonicalised and stores nothing', async () => {
      const audit = new AuditLog({ store: makeStore() });
      const error = await audit
        .append({ threadId: 't', type: 'tool_executed', payload: { amount: 10n } })
        .catch((caught: unknown) => caught);
      expect(VeridexError.is(error, 'canonical_json_invalid')).toBe(true);
      expect(await audit.events('t')).toEqual([]);
    });

    if (open) {
      it('never forks a chain under concurrent appends from separate connections', async () => {
        const stores = [makeStore(), await open(), await open()];
        const logs = stores.map((store) => new AuditLog({ store }));
        await Promise.all(
          logs.flatMap((log, writer) =>
            Array.from({ length: 15 }, (_, index) =>
              log.append({ threadId: 'busy', type: 'tool_executed', payload: { writer, index } }),
            ),
          ),
        );
        const events = await logs[0]!.events('busy');
        expect(events).toHaveLength(45);
        expect(verifyChain(events).valid).toBe(true);
      });

      it('stores a replay-safe event once when several connections append it at the same moment', async () => {
        const logs = [makeStore(), await open(), await open()].map(
          (store) => new AuditLog({ store }),
        );
        for (let round = 0; round < 10; round++) {
          const threadId = `race-${round}`;
          // The same deterministic event from three processes (a resume handled twice).
          const appended = await Promise.all(
            logs.map((log) =>
              log.append({
                threadId,
                eventId: `evt_race_${round}`,
                type: 'approval_decided',
                payload: { round },
              }),
            ),
          );
          expect(new Set(appended.map((event) => event.hash)).size).toBe(1);
          const events = await logs[0]!.events(threadId);
          expect(events.map((event) => event.eventId)).toEqual([`evt_race_${round}`]);
        }
      });
    }
  });
}

auditContract('AuditLog over MemoryAuditStore', () => new MemoryAuditStore());

describeEachDatabase('AuditLog over PostgresAuditStore', ({ db, open }) => {
  auditContract(
    'contract',
    () => new PostgresAuditStore(db()),
    async () => new PostgresAuditStore(await open()),
  );

  it('detects an event edited, deleted or reordered directly in SQL', async () => {
    const audit = new AuditLog({ store: new PostgresAuditStore(db()) });
    for (let index = 0; index < 4; index++) {
      await audit.append({ threadId: 'x', type: 'tool_executed', payload: { index } });
    }
    await db().query(
      `UPDATE veridex_audit_events SET payload = '{"index":99}' WHERE thread_id = 'x' AND seq = 2`,
    );
    expect(await audit.verify('x')).toMatchObject({
      valid: false,
      brokenAt: 1,
      reason: expect.stringMatching(/modified/),
    });

    await db().query(`DELETE FROM veridex_audit_events WHERE thread_id = 'x' AND seq = 2`);
    expect(await audit.verify('x')).toMatchObject({
      valid: false,
      brokenAt: 1,
      reason: expect.stringMatching(/dropped/),
    });
  });
});

describe('verifyChain', () => {
  it('reports reordered events at the first out-of-place link', async () => {
    const audit = new AuditLog();
    for (let index = 0; index < 3; index++) {
      await audit.append({ threadId: 'r', type: 'tool_executed', payload: { index } });
    }
    const [a, b, c] = await audit.events('r');
    expect(verifyChain([a!, c!, b!])).toMatchObject({ valid: false, brokenAt: 1 });
    expect(verifyChain([b!, c!])).toMatchObject({ valid: false, brokenAt: 0 });
  });
});

describe('AuditBatch', () => {
  it('stores nothing until flushed, then everything in order, per thread', async () => {
    const { AuditBatch } = await import('../../src/audit/index.js');
    const audit = new AuditLog();
    const batch = new AuditBatch(audit);
    await batch.append({ threadId: 'a', type: 'tool_proposed', payload: { n: 1 } });
    await batch.append({ threadId: 'a', type: 'policy_decision', payload: { n: 2 } });
    await batch.append({ threadId: 'b', type: 'tool_proposed', payload: { n: 3 } });
    expect(await audit.events('a')).toEqual([]);
    const stored = await batch.flush();
    expect(stored.map((event) => event.payload.n)).toEqual([1, 2, 3]);
    expect((await audit.events('a')).map((event) => event.type)).toEqual([
      'tool_proposed',
      'policy_decision',
    ]);
    expect(await audit.verify('b')).toMatchObject({ valid: true, length: 1 });
    expect(await batch.flush()).toEqual([]);
  });
});

describe('digest fields', () => {
  const github = `ghp_${'A1b2'.repeat(9)}`;
  const digest = '4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318';

  it('keeps a digest-shaped value of a named digest field as given, and scrubs everything else', async () => {
    const audit = new AuditLog();
    const event = await audit.append({
      threadId: 'd',
      type: 'tool_executed',
      ...verbatimDigests(
        {
          contentHash: digest,
          // Named a digest field, but not a digest: scrubbed like any other value.
          schemaHash: github,
          // Digest-shaped, but not named a digest field: what an announced private key would be.
          note: `private key ${digest}`,
          [`key ${github}`]: 1,
        },
        ['contentHash', 'schemaHash'],
      ),
    });
    expect(event.payload.contentHash).toBe(digest);
    expect(event.payload.schemaHash).toBe('[REDACTED:github_token]');
    expect(event.payload.note).toBe('private key [REDACTED:hex_private_key]');
    expect(Object.keys(event.payload)).toContain('key [REDACTED:github_token]');
    expect(JSON.stringify(event.payload)).not.toContain(github);
  });

  it('scrubs registered secrets out of a named digest field that holds one', async () => {
    const scrubber = new SecretScrubber();
    scrubber.register('TOKEN', 'hunter2-very-secret-value');
    const audit = new AuditLog({ scrubber });
    const event = await audit.append({
      threadId: 'd',
      type: 'tool_executed',
      payload: { proposalHash: 'hunter2-very-secret-value' },
      digests: ['proposalHash'],
    });
    expect(event.payload.proposalHash).toBe('[REDACTED:TOKEN]');
  });
});
