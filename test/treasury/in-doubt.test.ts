import { describe, expect, it } from 'vitest';
import { idempotencyKeyFor, MemoryIdempotencyStore } from '../../src/tools/index.js';
import { signAs } from '../support/approvers.js';
import { describeEachDatabase } from '../support/databases.js';
import { ACME, type KitBackend, kitFixture } from './kit-fixture.js';

const pay = { to: ACME, amount: '1200.00', currency: 'USD', memo: 'INV-77' };
const key = idempotencyKeyFor({ threadId: 'thread-1', toolCallId: 'call_1' });

function inDoubtSuite(backend: () => KitBackend) {
  it('settles an executor error with lookup when the rail has the payment: paid once', async () => {
    const f = await kitFixture({ backend: backend() });
    f.rail.failNext(new Error('socket hang up'), { afterRecording: true });
    const result = await f.transfer(pay);
    expect(result).toMatchObject({ status: 'success', output: { amount: '1200.00' } });
    const executed = (await f.audit.events('thread-1')).find((e) => e.type === 'transfer_executed');
    expect(executed?.payload).toMatchObject({ source: 'lookup' });
    expect(await f.executions(key)).toBe(1);
  });

  it('fails cleanly when lookup confirms that the failing executor moved nothing', async () => {
    const f = await kitFixture({ backend: backend() });
    f.rail.failNext(new Error('503 from rail'));
    const result = await f.transfer(pay);
    expect(result).toMatchObject({ status: 'error', code: 'tool_failed' });
    expect(result.status === 'error' && result.message).toMatch(
      /confirms that nothing was executed/,
    );
    expect((await f.kit.ceilings.get(key))?.state).toBe('released');
    expect(await f.executions(key)).toBe(0);
  });

  it('marks an ambiguous executor error transfer_in_doubt without lookup, escalates it, and never repays', async () => {
    const f = await kitFixture({ backend: backend(), lookup: false });
    f.rail.failNext(new Error('socket hang up'), { afterRecording: true });
    const result = await f.transfer(pay);
    expect(result).toMatchObject({ status: 'error', code: 'transfer_in_doubt' });
    expect((await f.idempotency.get(key))?.state).toBe('in_doubt');
    expect((await f.kit.ceilings.get(key))?.state).toBe('executing');

    const pending = await f.approvals.listPending({ threadId: 'thread-1' });
    expect(pending).toHaveLength(1);
    expect(pending[0]).toMatchObject({
      route: 'human_required',
      ruleId: 'treasury.transfer_in_doubt',
      proposer: 'payout-bot',
      summary: { kind: 'transfer_reconciliation', idempotencyKey: key },
    });
    expect(pending[0]?.reason).toMatch(/may have executed on the payment rail/);
    const doubt = (await f.audit.events('thread-1')).find((e) => e.type === 'transfer_in_doubt');
    expect(doubt?.payload).toMatchObject({ approvalId: pending[0]?.id, idempotencyKey: key });

    const retry = await f.transfer(pay);
    expect(retry).toMatchObject({ status: 'error', code: 'transfer_in_doubt' });
    expect(await f.approvals.listPending({ threadId: 'thread-1' })).toHaveLength(1);
    expect(await f.executions(key)).toBe(1);

    const receipt = (await f.rail.lookup!(key))!;
    const reconciled = await f.kit.reconcile(
      key,
      { executed: receipt },
      {
        by: 'ops@example.com',
        decision: signAs((await f.kit.reconciliationRequest(key))!, 'ops@example.com'),
      },
    );
    expect(reconciled).toMatchObject({
      executed: true,
      receipt: { reference: receipt.reference },
      result: { status: 'success' },
    });
    expect((await f.approvals.get(pending[0]!.id))?.status).toBe('approved');
    expect(await f.transfer(pay)).toMatchObject({
      status: 'success',
      replayed: true,
      output: { reference: receipt.reference },
    });
    expect(await f.executions(key)).toBe(1);
    expect((await f.kit.ceilings.usage('USD')).committed.amount).toBe(120_000n);
  });

  it('re-executes a transfer reconciled as not executed, exactly once', async () => {
    const f = await kitFixture({ backend: backend(), lookup: false });
    f.rail.failNext(new Error('connection refused'));
    expect(await f.transfer(pay)).toMatchObject({ code: 'transfer_in_doubt' });
    expect(await f.executions(key)).toBe(0);
    const request = (await f.kit.reconciliationRequest(key))!;
    const decision = signAs(request, 'ops@example.com');
    expect(
      await f.kit.reconcile(key, { executed: false }, { by: 'ops@example.com', decision }),
    ).toEqual({
      idempotencyKey: key,
      executed: false,
    });
    expect((await f.kit.ceilings.get(key))?.state).toBe('released');
    expect(await f.transfer(pay)).toMatchObject({ status: 'success' });
    expect(await f.transfer(pay)).toMatchObject({ status: 'success', replayed: true });
    expect(await f.executions(key)).toBe(1);
    expect((await f.kit.ceilings.get(key))?.attempt).toBe(2);
  });

  it('refuses reconciliations that contradict the records', async () => {
    const f = await kitFixture({ backend: backend(), lookup: false });
    await expect(f.kit.reconcile(key, { executed: false })).rejects.toMatchObject({
      code: 'idempotency_conflict',
    });
    f.rail.failNext(new Error('timeout'), { afterRecording: true });
    await f.transfer(pay);
    await expect(f.kit.reconcile(key, { executed: { reference: '' } })).rejects.toMatchObject({
      code: 'input_invalid',
    });
    await expect(
      f.kit.reconcile(key, { executed: { reference: '0x1', idempotencyKey: 'idem_other' } }),
    ).rejects.toMatchObject({ code: 'input_invalid' });
    await f.kit.ceilings.store.commit(key, { reference: '0xrail' }, new Date());
    await expect(f.kit.reconcile(key, { executed: false })).rejects.toMatchObject({
      code: 'idempotency_conflict',
      message: expect.stringMatching(/receipt 0xrail/),
    });
  });

  it('refuses a reconciler the approval rules refuse, before settling anything', async () => {
    const f = await kitFixture({ backend: backend(), lookup: false });
    f.rail.failNext(new Error('timeout'));
    await f.transfer(pay);
    const request = (await f.kit.reconciliationRequest(key))!;
    await expect(
      f.kit.reconcile(key, { executed: false }, { decision: signAs(request, 'payout-bot') }),
    ).rejects.toMatchObject({ code: 'proposer_cannot_approve' });
    // A bare name is no decision at all.
    await expect(
      f.kit.reconcile(key, { executed: false }, { by: 'ops@example.com' }),
    ).rejects.toMatchObject({ code: 'decision_unsigned' });
    expect((await f.idempotency.get(key))?.state).toBe('in_doubt');
    expect((await f.kit.ceilings.get(key))?.state).toBe('executing');
  });

  it('settles a transfer that timed out but finished later from the ledger, without paying again', async () => {
    // The rail answers only when the test lets it, after the timeout was reported, and the test
    // waits for it to have finished: events, not sleeps, so a slow machine cannot reorder them.
    let letRailAnswer!: () => void;
    const railMayAnswer = new Promise<void>((resolve) => (letRailAnswer = resolve));
    let railFinished!: Promise<unknown>;
    const f = await kitFixture({
      backend: backend(),
      executor: (rail) => ({
        execute: (request) => {
          railFinished = railMayAnswer.then(() => rail.execute(request));
          return railFinished as ReturnType<typeof rail.execute>;
        },
      }),
      transferTimeoutMs: 150,
    });
    expect(await f.transfer(pay)).toMatchObject({ status: 'error', code: 'tool_timeout' });
    expect((await f.idempotency.get(key))?.state).toBe('in_doubt');
    letRailAnswer();
    await railFinished;
    expect(await f.transfer(pay)).toMatchObject({
      status: 'success',
      output: { amount: '1200.00' },
    });
    expect(await f.executions(key)).toBe(1);
  });

  it('never pays twice when the idempotency store forgot the key but the ledger holds the receipt', async () => {
    const f = await kitFixture({ backend: backend() });
    const first = await f.transfer(pay);
    const forgetful = new MemoryIdempotencyStore();
    const second = await f.transfer(pay, {}, { idempotency: forgetful });
    expect(second).toMatchObject({ status: 'success', replayed: false });
    expect(second.status === 'success' && first.status === 'success' && second.output).toEqual(
      first.status === 'success' ? first.output : undefined,
    );
    expect(await f.executions(key)).toBe(1);
  });
}

describe('in-doubt transfers [memory]', () => inDoubtSuite(() => ({ kind: 'memory' })));
describeEachDatabase('in-doubt transfers', ({ db }) =>
  inDoubtSuite(() => ({ kind: 'database', db: db() })),
);
