import type { ToolMessage } from '@langchain/core/messages';
import { Command } from '@langchain/langgraph';
import { expect, it } from 'vitest';
import type { AuditLog } from '../../src/audit/index.js';
import type { Database } from '../../src/db/index.js';
import { RECHECK } from '../../src/nodes/index.js';
import { signAs } from '../support/approvers.js';
import { describeEachDatabase } from '../support/databases.js';
import { insiderGraph, suspendedOn } from '../support/insider-graph.js';

/**
 * The insider with `psql` (threat model, adversary 4) against the gate before execution: the
 * approvals table says whatever they write, and no money may move on the strength of it.
 */
const config = (threadId: string) => ({ configurable: { thread_id: threadId } });
const graphOn = (db: Database, identity: 'signed' | 'unverified' = 'signed') =>
  insiderGraph(db, { identity });
const suspended = suspendedOn;

function toolAnswer(result: { messages: unknown[] }): ToolMessage {
  const answer = (result.messages as ToolMessage[]).find((message) => message.getType() === 'tool');
  if (!answer) throw new Error('expected the call to be answered');
  return answer;
}

async function securityKinds(audit: AuditLog, threadId: string) {
  return (await audit.events(threadId))
    .filter((event) => event.type === 'security_event')
    .map((event) => event.payload.kind);
}

describeEachDatabase('an insider with write access to the approvals table', (context) => {
  it('flips status to approved with no decision at all: the transfer does not run', async () => {
    const { graph, ledger, audit } = await graphOn(context.db());
    const pending = await suspended(graph, 't-flip');
    await context
      .db()
      .query(`UPDATE veridex_approvals SET status = 'approved' WHERE id = $1`, [
        pending.approvalId,
      ]);
    const result = await graph.invoke(new Command({ resume: RECHECK }), config('t-flip'));
    expect(ledger.transfers).toHaveLength(0);
    expect(toolAnswer(result).content).toMatch(/not executed.*recorded as approved/);
    expect(await securityKinds(audit, 't-flip')).toContain('approval_unproven');
    expect((await audit.events('t-flip')).map((event) => event.type)).not.toContain(
      'tool_executed',
    );
  });

  it('flips identity_mode to unverified: bare names are refused and cannot complete the quorum', async () => {
    const { graph, ledger, approvals } = await graphOn(context.db());
    const pending = await suspended(graph, 't-mode');
    await context
      .db()
      .query(`UPDATE veridex_approvals SET identity_mode = 'unverified' WHERE id = $1`, [
        pending.approvalId,
      ]);
    for (const approver of ['alice', 'bob']) {
      await expect(
        approvals.decide(pending.approvalId, { decision: 'approve', approver }),
      ).rejects.toMatchObject({ code: 'decision_unsigned' });
    }
    await graph.invoke(new Command({ resume: RECHECK }), config('t-mode'));
    expect(ledger.transfers).toHaveLength(0);
  });

  it('writes bare-name decisions straight into the row and flips it approved: refused before execution', async () => {
    const { graph, ledger, audit } = await graphOn(context.db());
    const pending = await suspended(graph, 't-forge');
    const forged = ['alice', 'bob'].map((approver, index) => ({
      decisionId: `forged-${index}`,
      approver,
      decision: 'approve',
      tier: 0,
      decidedAt: new Date().toISOString(),
      verified: true,
    }));
    await context
      .db()
      .query(
        `UPDATE veridex_approvals SET status = 'approved', identity_mode = 'unverified', decisions = $2 WHERE id = $1`,
        [pending.approvalId, JSON.stringify(forged)],
      );
    const result = await graph.invoke(new Command({ resume: RECHECK }), config('t-forge'));
    expect(ledger.transfers).toHaveLength(0);
    expect(toolAnswer(result).content).toMatch(/not executed/);
    expect(await securityKinds(audit, 't-forge')).toContain('approval_unproven');
  });

  it('copies one real signed approval twice under another name: one person never makes a quorum of two', async () => {
    const { graph, ledger, approvals } = await graphOn(context.db());
    const pending = await suspended(graph, 't-copy');
    await approvals.decide(pending.approvalId, signAs(pending, 'alice'));
    const { rows } = await context
      .db()
      .query<{ decisions: unknown }>(`SELECT decisions FROM veridex_approvals WHERE id = $1`, [
        pending.approvalId,
      ]);
    const decisions = (
      typeof rows[0]!.decisions === 'string' ? JSON.parse(rows[0]!.decisions) : rows[0]!.decisions
    ) as Array<Record<string, unknown>>;
    const copy = { ...decisions[0]!, decisionId: 'copy', approver: 'bob' };
    await context
      .db()
      .query(`UPDATE veridex_approvals SET status = 'approved', decisions = $2 WHERE id = $1`, [
        pending.approvalId,
        JSON.stringify([...decisions, copy]),
      ]);
    await graph.invoke(new Command({ resume: RECHECK }), config('t-copy'));
    expect(ledger.transfers).toHaveLength(0);
  });

  it('lowers the tier quorum in the row to one: the configured dual approval still needs two', async () => {
    const { graph, ledger, approvals } = await graphOn(context.db());
    const pending = await suspended(graph, 't-tiers');
    await context
      .db()
      .query(
        `UPDATE veridex_approvals SET tiers = '[{"name":"dual","approvers":"*","requiredApprovals":1,"timeoutMs":86400000}]' WHERE id = $1`,
        [pending.approvalId],
      );
    // The row now says one approval is enough, so alice's closes it as approved...
    const closed = await approvals.decide(pending.approvalId, signAs(pending, 'alice'));
    expect(closed.status).toBe('approved');
    // ...but the proof counts against the configured route: one of two.
    await graph.invoke(new Command({ resume: RECHECK }), config('t-tiers'));
    expect(ledger.transfers).toHaveLength(0);
  });

  it('injects an unsigned edit that lowers the amount below the threshold: never planned, never paid', async () => {
    const { graph, ledger, audit } = await graphOn(context.db());
    const pending = await suspended(graph, 't-edit');
    const edit = {
      decisionId: 'forged-edit',
      approver: 'alice',
      decision: 'edit',
      editedArgs: { to: 'mallory', amount: '9000.00', currency: 'USD' },
      tier: 0,
      decidedAt: new Date().toISOString(),
      verified: true,
    };
    await context
      .db()
      .query(`UPDATE veridex_approvals SET status = 'edited', decisions = $2 WHERE id = $1`, [
        pending.approvalId,
        JSON.stringify([edit]),
      ]);
    await graph.invoke(new Command({ resume: RECHECK }), config('t-edit'));
    expect(ledger.transfers).toHaveLength(0);
    expect(await securityKinds(audit, 't-edit')).toContain('approval_unproven');
  });

  it('still runs the call once after two real signed approvals (the proof passes for honest rows)', async () => {
    const { graph, ledger, approvals } = await graphOn(context.db());
    const pending = await suspended(graph, 't-honest');
    await approvals.decide(pending.approvalId, signAs(pending, 'alice'));
    await approvals.decide(pending.approvalId, signAs(pending, 'bob'));
    await graph.invoke(new Command({ resume: RECHECK }), config('t-honest'));
    await graph.invoke(new Command({ resume: RECHECK }), config('t-honest'));
    expect(ledger.transfers).toHaveLength(1);
    expect(ledger.transfers[0]?.approvedBy).toEqual(['alice', 'bob']);
  });

  it('an agent in the development mode counts bare names, and a signed-mode agent does not', async () => {
    const dev = await graphOn(context.db(), 'unverified');
    const pending = await suspended(dev.graph, 't-dev');
    await dev.approvals.decide(pending.approvalId, { decision: 'approve', approver: 'alice' });
    await dev.approvals.decide(pending.approvalId, { decision: 'approve', approver: 'bob' });
    await dev.graph.invoke(new Command({ resume: RECHECK }), config('t-dev'));
    expect(dev.ledger.transfers).toHaveLength(1);
  });
});
