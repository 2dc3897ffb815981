// The insider of THREAT-MODEL.md (adversary 4): write access to the audit tables, and the agent's
// evidence key (whoever runs the application can seal). They rewrite rows, recompute every
// hash of the chain, and seal a fresh bundle. The chain alone cannot tell; an older bundle or
// the published heads must.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  AuditLog,
  canonicalJson,
  Ed25519Signer,
  type EvidenceBundle,
  FileHeadWitness,
  GENESIS_HASH,
  generateKeyPair,
  PostgresAuditStore,
  readHeadFile,
  sealAuditThread,
  sealEvidence,
  type TraceEvent,
  TransparencyLog,
  verifyEvidence,
  verifyWitnessedHeads,
} from '../../src/audit/index.js';
import type { Database } from '../../src/db/index.js';
import { describeEachDatabase } from '../support/databases.js';
import { rechain } from '../support/rechain.js';

const signer = new Ed25519Signer(generateKeyPair().privateKey);
const keys = [signer.verifier()];
// The scene's approval is a development-mode one (a bare name): the bundles accept that mode
// by name, so what these tests see is the insider's rewrite, not the missing signature.
const trusting = { keys, allowUnverified: true };
const dir = mkdtempSync(join(tmpdir(), 'veridex-insider-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Scene {
  audit: AuditLog;
  threadId: string;
  older: EvidenceBundle;
  witnessFile: string;
}

/** A payout run with one approval, sealed (head to the witness file) and published (global head). */
async function scene(db: Database): Promise<Scene> {
  const threadId = `payout-${randomUUID()}`;
  const witnessFile = join(dir, `${threadId}.jsonl`);
  let clock = Date.parse('2026-03-01T09:00:00Z');
  const audit = new AuditLog({
    store: new PostgresAuditStore(db),
    witnesses: [new FileHeadWitness(witnessFile, { keys })],
    now: () => {
      clock += 1000;
      return new Date(clock);
    },
  });
  const append = (type: TraceEvent['type'], payload: Record<string, unknown>) =>
    audit.append({ threadId, type, payload });
  await append('run_started', { agent: 'payout-bot' });
  await append('tool_proposed', { toolName: 'transfer', arguments: { amount: '50000.00' } });
  await append('approval_requested', {
    approvalId: 'apr_1',
    toolName: 'transfer',
    requiredApprovals: 1,
    identityMode: 'unverified',
  });
  await append('approval_decided', {
    approvalId: 'apr_1',
    approver: 'alice@ops.example',
    approverName: 'Alice',
    decision: 'approve',
    verified: false,
  });
  await append('approval_resolved', { approvalId: 'apr_1', status: 'approved' });
  await append('transfer_executed', { toolName: 'transfer' });
  await append('run_completed', {});
  const { bundle: older } = await sealAuditThread(audit, { threadId }, [signer]);
  await new TransparencyLog({ audit, signers: [signer] }).publish();
  return { audit, threadId, older, witnessFile };
}

/** The insider's tool: read the rows, edit them, recompute the chain, write them back. */
async function rewriteRows(
  db: Database,
  threadId: string,
  edit: (events: TraceEvent[]) => TraceEvent[],
): Promise<void> {
  const events = await new PostgresAuditStore(db).list(threadId);
  const rechained = rechain(edit(events));
  await db.transaction(async (tx) => {
    await tx.query('DELETE FROM veridex_audit_events WHERE thread_id = $1', [threadId]);
    for (const [index, event] of rechained.entries()) {
      await tx.query(
        `INSERT INTO veridex_audit_events
           (thread_id, seq, event_id, run_id, turn_index, type, timestamp, payload, previous_hash, hash)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
        [
          threadId,
          index + 1,
          event.eventId,
          event.runId,
          event.turnIndex,
          event.type,
          event.timestamp,
          canonicalJson(event.payload),
          event.previousEventHash,
          event.hash,
        ],
      );
    }
    await tx.query('UPDATE veridex_audit_heads SET seq = $2, hash = $3 WHERE thread_id = $1', [
      threadId,
      rechained.length,
      rechained.at(-1)?.hash ?? GENESIS_HASH,
    ]);
  });
}

const cfo = (event: TraceEvent): TraceEvent =>
  event.type === 'approval_decided'
    ? { ...event, payload: { ...event.payload, approver: 'cfo@corp', approverName: 'CFO' } }
    : event;

const ATTACKS: Record<string, (events: TraceEvent[]) => TraceEvent[]> = {
  'changes the approver to cfo@corp': (events) => events.map(cfo),
  'drops the last event': (events) => events.slice(0, -1),
  'reorders two events': (events) => [events[0]!, events[2]!, events[1]!, ...events.slice(3)],
  'inserts a forged decision': (events) => [
    ...events.slice(0, 4),
    cfo({ ...events[3]!, eventId: 'evt_forged_decision' }),
    ...events.slice(4),
  ],
};

const witnessed = (file: string) =>
  readHeadFile(file).map((entry) => ({ at: entry.line, value: entry.value }));

describeEachDatabase('an insider with write access to the audit tables', ({ db }) => {
  it('is invisible to the hash chain alone (why anchors are needed)', async () => {
    const { audit, threadId } = await scene(db());
    await rewriteRows(db(), threadId, ATTACKS['changes the approver to cfo@corp']!);
    expect(await audit.verify(threadId)).toMatchObject({ valid: true, length: 7 });
    const resealed = sealEvidence({ threadId, events: await audit.events(threadId) }, [signer]);
    const alone = verifyEvidence(resealed, trusting);
    expect(alone.valid).toBe(true);
    expect(alone.decisions[0]).toMatchObject({ approver: 'cfo@corp', approverName: 'CFO' });
  });

  for (const [name, attack] of Object.entries(ATTACKS)) {
    describe(`who ${name} and recomputes the chain`, () => {
      it('is caught by verifyEvidence(resealed, { previous: olderBundle or its head })', async () => {
        const { audit, threadId, older } = await scene(db());
        await rewriteRows(db(), threadId, attack);
        expect((await audit.verify(threadId)).valid).toBe(true);
        const resealed = sealEvidence({ threadId, events: await audit.events(threadId) }, [signer]);
        expect(verifyEvidence(resealed, trusting).valid).toBe(true);

        const sinceBundle = verifyEvidence(resealed, { ...trusting, previous: older });
        expect(sinceBundle.valid).toBe(false);
        expect(sinceBundle.reasons.join('\n')).toMatch(
          name === 'drops the last event'
            ? /the older bundle covered 7 events .* only 6: events were dropped/
            : /this bundle is not consistent with the older bundle .*: its event \d+ \(\w+ [\w-]+\) was rewritten/,
        );
        const olderHead = verifyEvidence(older, trusting).body?.log?.treeHead;
        expect(verifyEvidence(resealed, { ...trusting, previous: olderHead }).valid).toBe(false);
      });

      it('is caught by the published heads (veridex audit verify --witness)', async () => {
        const { audit, threadId, witnessFile } = await scene(db());
        expect(await verifyWitnessedHeads(audit, witnessed(witnessFile), { keys })).toMatchObject({
          valid: true,
        });
        await rewriteRows(db(), threadId, attack);
        const result = await verifyWitnessedHeads(audit, witnessed(witnessFile), { keys });
        expect(result.valid).toBe(false);
        expect(result.first).toMatchObject({ at: 1, status: 'inconsistent' });
        expect(result.first?.reason).toMatch(
          name === 'drops the last event'
            ? /now has only 6: entries it covered were dropped/
            : /not consistent with thread ".*" at 7 event\(s\)/,
        );
        // The thread head the witnessed global head vouches for fails the same way.
        expect(
          result.checks.some(
            (check) => check.globalIndex !== undefined && check.status === 'inconsistent',
          ),
        ).toBe(true);
      });

      it('makes an honest seal refuse, even after the insider wipes the recorded heads', async () => {
        const { audit, threadId } = await scene(db());
        await rewriteRows(db(), threadId, attack);
        await expect(sealAuditThread(audit, { threadId }, [signer])).rejects.toMatchObject({
          code: 'audit_log_inconsistent',
        });
        await db().query('DELETE FROM veridex_audit_tree_heads');
        await db().query('DELETE FROM veridex_audit_global_heads');
        // The database no longer remembers; the witness file does.
        await expect(sealAuditThread(audit, { threadId }, [signer])).rejects.toThrow(
          /Witness .* refused thread/,
        );
        // Refused before recording: the rewritten history got no head of its own.
        expect(await audit.heads.threadHeads(threadId)).toEqual([]);
      });
    });
  }

  it('who also rewrites the recorded thread heads is caught by the witnessed global head', async () => {
    const { audit, threadId, witnessFile } = await scene(db());
    // Keep only the global heads in the witness file: they vouch for every thread.
    const globalOnly = witnessed(witnessFile).filter(
      (entry) => (entry.value as { scope: string }).scope === 'global',
    );
    await rewriteRows(db(), threadId, ATTACKS['changes the approver to cfo@corp']!);
    // Re-sign the thread's head over the rewritten log, as an insider with the key can.
    await db().query('DELETE FROM veridex_audit_tree_heads WHERE thread_id = $1', [threadId]);
    const unwitnessed = new AuditLog({ store: audit.store });
    await new TransparencyLog({ audit: unwitnessed, signers: [signer] }).signThread(threadId);
    const result = await verifyWitnessedHeads(audit, globalOnly, { keys });
    expect(result.valid).toBe(false);
    expect(result.first?.head?.scope).toBe('global');
    expect(result.first?.reason).toMatch(/not consistent with the global log/);
  });

  it('who appends honestly is not flagged: appends extend every head', async () => {
    const { audit, threadId, older, witnessFile } = await scene(db());
    await audit.append({ threadId, type: 'run_started', payload: { agent: 'payout-bot' } });
    const { bundle } = await sealAuditThread(audit, { threadId }, [signer]);
    expect(verifyEvidence(bundle, { ...trusting, previous: older }).reasons).toEqual([]);
    await new TransparencyLog({ audit, signers: [signer] }).publish();
    expect((await verifyWitnessedHeads(audit, witnessed(witnessFile), { keys })).valid).toBe(true);
  });
});
