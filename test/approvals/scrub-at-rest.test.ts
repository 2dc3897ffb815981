import { expect, it } from 'vitest';
import { ApprovalManager } from '../../src/approvals/index.js';
import { AuditLog, PostgresAuditStore } from '../../src/audit/index.js';
import type { Database } from '../../src/db/index.js';
import { VeridexError } from '../../src/errors/index.js';
import { describeEachDatabase } from '../support/databases.js';
import { approvalsIn, escalate, transferProposal } from '../support/proposals.js';

// Issue 29: a process whose first act touches the approvals table (an inbox, a CLI, a worker
// opening requests) has not loaded the secret fingerprints another process registered. What it
// stores must be scrubbed with them all the same. (The CLI case runs in real processes in
// test/cli/secret-across-processes.test.ts.)
const SECRET = 'pk_live_9Tq4Wz7LmR2xV8nB3kY6cD1f';

/** The agent registers the secret and stores its fingerprints, as a governed agent does. */
async function registerInAgent(db: Database): Promise<void> {
  const agent = new AuditLog({ store: new PostgresAuditStore(db) });
  agent.scrubber.register('PAYMENT_API_KEY', SECRET);
  await agent.append({ threadId: 'agent', type: 'run_started', payload: {} });
}

async function approvalsText(db: Database): Promise<string> {
  const { rows } = await db.query('SELECT * FROM veridex_approvals');
  return JSON.stringify(rows);
}

describeEachDatabase(
  'what the approvals table stores, in a process that knows no secret',
  ({ db, open }) => {
    it('scrubs request arguments, summary and reasons with the fingerprints loaded first', async () => {
      await registerInAgent(db());
      const other = await open();
      const manager = new ApprovalManager({
        db: other,
        audit: new AuditLog({ store: new PostgresAuditStore(other) }),
        identity: 'unverified',
      });
      const request = await manager.request(
        transferProposal('t-secret', 'call_1', `memo ${SECRET}`),
        escalate('human_required'),
        { summary: { toolName: 'transfer', arguments: { memo: `memo ${SECRET}` } } },
      );
      await manager.decide(request.id, {
        decision: 'approve',
        approver: 'alice',
        reason: `fine, key ${SECRET}`,
      });
      const text = await approvalsText(db());
      expect(text).toContain('[REDACTED:PAYMENT_API_KEY]');
      expect(text).not.toContain(SECRET);
    });

    it('scrubs reasons with the shared fingerprints when the manager has no audit log', async () => {
      await registerInAgent(db());
      const other = await open();
      const manager = approvalsIn(other, { identity: 'unverified' });
      const request = await manager.request(
        transferProposal('t-plain'),
        escalate('human_required'),
      );
      await manager.decide(request.id, {
        decision: 'reject',
        approver: 'alice',
        reason: `no: ${SECRET}`,
      });
      const text = await approvalsText(db());
      expect(text).toContain('[REDACTED:PAYMENT_API_KEY]');
      expect(text).not.toContain(SECRET);
    });

    it('refuses an edit that carries a registered secret, storing nothing of it', async () => {
      await registerInAgent(db());
      const other = await open();
      const manager = new ApprovalManager({
        db: other,
        audit: new AuditLog({ store: new PostgresAuditStore(other) }),
        identity: 'unverified',
      });
      const request = await manager.request(transferProposal('t-edit'), escalate('human_required'));
      const refused = await manager
        .decide(request.id, {
          decision: 'edit',
          approver: 'alice',
          editedArgs: { to: 'acme-suppliers', amount: '10.00', currency: 'USD', memo: SECRET },
        })
        .catch((error: unknown) => error);
      expect(VeridexError.is(refused, 'resume_payload_invalid')).toBe(true);
      expect((refused as Error).message).toContain('PAYMENT_API_KEY');
      expect((refused as Error).message).not.toContain(SECRET);
      expect(await approvalsText(db())).not.toContain(SECRET);
      expect((await manager.require(request.id)).decisions).toHaveLength(0);
    });
  },
);
