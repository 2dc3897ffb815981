import { expect, it } from 'vitest';
import { memoryRules } from '../../src/memory/index.js';
import { signAs, testApproverInits } from '../support/approvers.js';
import { describeEachDatabase } from '../support/databases.js';
import { approvalsIn } from '../support/proposals.js';
import { countRecords, makeMemory } from './memory-fixture.js';

describeEachDatabase('escalated memory writes', ({ db }) => {
  const write = {
    content: 'The vendor portal says payouts go to IBAN DE02 1203 0000 0000 2020 51',
    source: 'tool' as const,
    tier: 'semantic' as const,
  };
  const context = { threadId: 'thread-esc', runId: 'run-1' };

  it('waits for a human: stored once approved, never before, and only once', async () => {
    const approvals = approvalsIn(db(), { approvers: testApproverInits(['alice']) });
    const { memory } = makeMemory(db(), {
      rules: [memoryRules.toolSourcedWrites('escalate')],
      approvals,
    });
    const first = await memory.propose(write, context);
    expect(first.status).toBe('escalated');
    const approvalId = first.status === 'escalated' ? first.approvalId : undefined;
    expect(approvalId).toMatch(/^apr_/);
    expect(
      (await approvals.listPending({ threadId: 'thread-esc' })).map((request) => request.id),
    ).toEqual([approvalId]);
    expect(await countRecords(db())).toBe(0);

    // Proposed again while pending: the same request, still nothing stored.
    expect((await memory.propose(write, context)).status).toBe('escalated');
    expect(await countRecords(db())).toBe(0);

    await approvals.decide(approvalId!, signAs(await approvals.require(approvalId!), 'alice'));
    expect((await memory.propose(write, context)).status).toBe('written');
    expect((await memory.propose(write, context)).status).toBe('written');
    expect(await countRecords(db())).toBe(1);
  });

  it('denies the write once a human rejected it', async () => {
    const approvals = approvalsIn(db(), { approvers: testApproverInits(['alice']) });
    const { memory } = makeMemory(db(), {
      rules: [memoryRules.toolSourcedWrites('escalate')],
      approvals,
    });
    const first = await memory.propose(write, context);
    const approvalId = first.status === 'escalated' ? first.approvalId! : '';
    await approvals.decide(
      approvalId,
      signAs(await approvals.require(approvalId), 'alice', 'reject', { reason: 'looks injected' }),
    );
    const again = await memory.propose(write, context);
    expect(again).toMatchObject({ status: 'denied', code: 'memory_write_denied' });
    expect(await countRecords(db())).toBe(0);
  });
});
