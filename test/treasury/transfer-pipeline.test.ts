import { describe, expect, it } from 'vitest';
import { verifyEvidence } from '../../src/audit/index.js';
import { idempotencyKeyFor, MemoryIdempotencyStore } from '../../src/tools/index.js';
import {
  createTreasuryKit,
  ListSanctionsScreener,
  MemoryCeilingStore,
  MemoryPaymentRail,
  NoopSanctionsScreener,
  StaticBalanceProvider,
  TransferRejectedError,
} from '../../src/treasury/index.js';
import { describeEachDatabase } from '../support/databases.js';
import { ACME, type KitBackend, kitFixture, SANCTIONED, signer } from './kit-fixture.js';

const pay = (amount: string, to = ACME, extra: Record<string, unknown> = {}) => ({
  to,
  amount,
  currency: 'USD',
  ...extra,
});
const keyOf = (toolCallId = 'call_1', threadId = 'thread-1') =>
  idempotencyKeyFor({ threadId, toolCallId });

function pipelineSuite(backend: () => KitBackend) {
  it('runs screening, balance, reservation, executor and commit in order, and pays once', async () => {
    const f = await kitFixture({
      backend: backend(),
      kit: { policy: { dailyLimit: { USD: '100000.00' } } },
    });
    const result = await f.transfer(pay('50000.00', ACME, { memo: 'INV-1234' }));
    expect(result).toMatchObject({
      status: 'success',
      output: {
        status: 'executed',
        to: ACME,
        amount: '50000.00',
        currency: 'USD',
        idempotencyKey: keyOf(),
      },
    });
    expect(await f.eventTypes()).toEqual([
      'counterparty_screened',
      'balance_checked',
      'ceiling_reserved',
      'transfer_executed',
      'ceiling_committed',
      'tool_executed',
    ]);
    const again = await f.transfer(pay('50000.00', ACME, { memo: 'INV-1234' }));
    expect(again).toMatchObject({ status: 'success', replayed: true });
    expect(await f.executions(keyOf())).toBe(1);
    const usage = await f.kit.ceilings.usage('USD');
    expect(usage).toMatchObject({
      committed: { amount: 5_000_000n },
      pending: { amount: 0n },
      remaining: { amount: 5_000_000n },
    });
    const executed = (await f.audit.events('thread-1')).find((e) => e.type === 'transfer_executed');
    expect(executed?.payload).toMatchObject({
      source: 'executor',
      approvedBy: ['alice', 'bob'],
      amount: { amount: '50000.00', minorUnits: '5000000', currency: 'USD', decimals: 2 },
      receipt: { idempotencyKey: keyOf() },
    });
  });

  it('refuses malformed amounts and addresses with input_invalid before anything runs', async () => {
    const f = await kitFixture({ backend: backend() });
    const separators = await f.transfer(pay('50,000.00'));
    expect(separators).toMatchObject({ status: 'error', code: 'input_invalid' });
    expect(separators.status === 'error' && separators.message).toMatch(/thousands separator/);
    expect(await f.transfer(pay('12.345'), { toolCallId: 'c2' })).toMatchObject({
      code: 'input_invalid',
    });
    expect(await f.transfer(pay('0'), { toolCallId: 'c3' })).toMatchObject({
      code: 'input_invalid',
    });
    expect(await f.transfer({ ...pay('10'), currency: 'XYZ' }, { toolCallId: 'c4' })).toMatchObject(
      {
        code: 'input_invalid',
      },
    );
    const short = await f.transfer(pay('10', '0x90F8bf9A'), { toolCallId: 'c5' });
    expect(short.status === 'error' && short.message).toMatch(/0x followed by 40 hex digits/);
    expect(await f.executions()).toBe(0);
  });

  it('fails with insufficient_funds after recording the balance check, holding nothing', async () => {
    const f = await kitFixture({ backend: backend(), balances: { USD: '100.00' } });
    const result = await f.transfer(pay('100.01'));
    expect(result).toMatchObject({ status: 'error', code: 'insufficient_funds' });
    expect(result.status === 'error' && result.message).toMatch(
      /needs 100\.01 USD but 100\.00 USD/,
    );
    const check = (await f.audit.events('thread-1')).find((e) => e.type === 'balance_checked');
    expect(check?.payload).toMatchObject({ sufficient: false, available: { amount: '100.00' } });
    expect(await f.kit.ceilings.get(keyOf())).toBeUndefined();
    expect(await f.executions()).toBe(0);
  });

  it('enforces the per-transaction maximum and the rolling daily limit with ceiling_exceeded', async () => {
    const policy = { perTransactionMax: { USD: '700.00' }, dailyLimit: { USD: '1000.00' } };
    const f = await kitFixture({ backend: backend(), kit: { policy } });
    expect(await f.transfer(pay('700.01'))).toMatchObject({
      status: 'error',
      code: 'ceiling_exceeded',
    });
    expect(await f.transfer(pay('600.00'), { toolCallId: 'c2' })).toMatchObject({
      status: 'success',
    });
    const over = await f.transfer(pay('400.01'), { toolCallId: 'c3' });
    expect(over).toMatchObject({ status: 'error', code: 'ceiling_exceeded' });
    expect(over.status === 'error' && over.message).toMatch(/400\.00 remains/);
    expect(await f.transfer(pay('400.00'), { toolCallId: 'c4' })).toMatchObject({
      status: 'success',
    });
    expect(await f.executions()).toBe(2);
    expect((await f.kit.ceilings.usage('USD')).remaining?.amount).toBe(0n);
  });

  it('refuses denylisted and sanctioned counterparties with sanctions_hit, whatever the address case', async () => {
    const sanctions = new ListSanctionsScreener({
      addresses: [SANCTIONED.toLowerCase()],
      source: 'SDN',
    });
    const denied = '0x1111111111111111111111111111111111111111';
    const f = await kitFixture({
      backend: backend(),
      sanctions,
      kit: { policy: { counterpartyDenylist: [denied] } },
    });
    const hit = await f.transfer(pay('10.00', SANCTIONED));
    expect(hit).toMatchObject({ status: 'error', code: 'sanctions_hit' });
    expect(hit.status === 'error' && hit.message).toMatch(/address listed on SDN/);
    expect(
      await f.transfer(pay('10.00', denied.toUpperCase().replace('0X', '0x')), {
        toolCallId: 'c2',
      }),
    ).toMatchObject({
      code: 'sanctions_hit',
    });
    const screened = (await f.audit.events('thread-1')).find(
      (e) => e.type === 'counterparty_screened',
    );
    expect(screened?.payload).toMatchObject({
      status: 'hit',
      source: 'SDN',
      matched: SANCTIONED.toLowerCase(),
    });
    expect(await f.executions()).toBe(0);
  });

  it('refuses a counterparty missing from a configured allowlist with policy_denied', async () => {
    const f = await kitFixture({
      backend: backend(),
      kit: { policy: { counterpartyAllowlist: [ACME.toLowerCase()] } },
    });
    expect(await f.transfer(pay('10.00', ACME))).toMatchObject({ status: 'success' });
    const other = '0x2222222222222222222222222222222222222222';
    expect(await f.transfer(pay('10.00', other), { toolCallId: 'c2' })).toMatchObject({
      status: 'error',
      code: 'policy_denied',
    });
    expect(await f.executions()).toBe(1);
  });

  it('fails a transfer locked beyond the wait with time_locked and releases its reservation', async () => {
    const later = new Date(Date.now() + 3_600_000);
    const f = await kitFixture({
      backend: backend(),
      kit: { timeLock: { notBefore: () => later } },
    });
    const result = await f.transfer(pay('10.00'));
    expect(result).toMatchObject({ status: 'error', code: 'time_locked' });
    expect(result.status === 'error' && result.message).toContain(later.toISOString());
    expect((await f.kit.ceilings.get(keyOf()))?.state).toBe('released');
    expect(await f.eventTypes()).toContain('ceiling_released');
    expect(await f.executions()).toBe(0);
    expect(await f.transfer(pay('10.00'))).toMatchObject({ code: 'time_locked', replayed: true });
  });

  it('waits out a short time-lock delay, then executes', async () => {
    const f = await kitFixture({ backend: backend(), kit: { timeLock: { delayMs: 60 } } });
    const result = await f.transfer(pay('10.00'));
    expect(result.status).toBe('success');
    const ledger = await f.kit.ceilings.get(keyOf());
    const executedAt = Date.parse(ledger?.receipt?.executedAt ?? '');
    expect(executedAt - ledger!.reservedAt.getTime()).toBeGreaterThanOrEqual(60);
  });

  it('releases the reservation and fails with tool_failed when the rail rejects the transfer', async () => {
    const f = await kitFixture({ backend: backend() });
    f.rail.failNext(new TransferRejectedError('beneficiary account closed', { code: 'AC04' }));
    const result = await f.transfer(pay('10.00'));
    expect(result).toMatchObject({
      status: 'error',
      code: 'tool_failed',
      details: { railCode: 'AC04' },
    });
    expect((await f.kit.ceilings.get(keyOf()))?.state).toBe('released');
    expect((await f.idempotency.get(keyOf()))?.state).toBe('failed');
  });

  it('answers get_balance and screen_counterparty from the providers, with audit events', async () => {
    const sanctions = new ListSanctionsScreener({ addresses: [SANCTIONED] });
    const f = await kitFixture({ backend: backend(), sanctions });
    const { executeTool } = await import('../../src/tools/execute-tool.js');
    const balance = await executeTool(
      f.kit.tool.getBalance,
      { currency: 'USD' },
      { threadId: 'thread-1', audit: f.audit },
    );
    expect(balance).toMatchObject({
      status: 'success',
      output: { currency: 'USD', amount: '1000000.00' },
    });
    const screen = await executeTool(
      f.kit.tool.screenCounterparty,
      { counterparty: SANCTIONED.toLowerCase() },
      { threadId: 'thread-1', audit: f.audit },
    );
    expect(screen).toMatchObject({ status: 'success', output: { status: 'hit' } });
    expect(await f.eventTypes()).toEqual([
      'balance_checked',
      'tool_executed',
      'counterparty_screened',
      'tool_executed',
    ]);
  });

  it('seals a thread whose evidence holds the balance check, screening, receipt and ceiling commit', async () => {
    const f = await kitFixture({ backend: backend() });
    await f.transfer(pay('25.00'));
    const { bundle } = await f.kit.sealEvidence('thread-1');
    const verified = verifyEvidence(JSON.parse(JSON.stringify(bundle)), { keys: [signer] });
    // The fixture runs the transfer tool directly, around the planner, so no policy decision
    // cleared it: the evidence says exactly that and nothing else.
    expect(verified.reasons).toEqual([
      'call call_1 was executed, but the bundle holds no policy decision for it',
    ]);
    expect(verified.body?.subject).toEqual({ appId: 'ops-suite-01', agentId: 'payout-bot' });
    const byType = new Map(verified.body!.events.map((event) => [event.type, event.payload]));
    expect(byType.get('counterparty_screened')).toMatchObject({ status: 'clear' });
    expect(byType.get('balance_checked')).toMatchObject({ sufficient: true });
    expect(byType.get('transfer_executed')).toMatchObject({
      receipt: { reference: expect.any(String) },
    });
    expect(byType.get('ceiling_committed')).toMatchObject({ amount: { amount: '25.00' } });
  });
}

describe('transfer pipeline [memory]', () => pipelineSuite(() => ({ kind: 'memory' })));
describeEachDatabase('transfer pipeline', ({ db }) =>
  pipelineSuite(() => ({ kind: 'database', db: db() })),
);

describe('the executor request', () => {
  it('hands the executor the idempotency key, exact amount, memo and approvers', async () => {
    const f = await kitFixture({ backend: { kind: 'memory' } });
    await f.transfer(pay('0.01', ACME, { memo: 'INV-1' }), { approvedBy: ['carol'] });
    const [execution] = (f.rail as MemoryPaymentRail).executions;
    expect(execution).toMatchObject({ idempotencyKey: keyOf(), amount: 1n, decimals: 2, to: ACME });
  });
});

describe('createTreasuryKit configuration', () => {
  const base = () => ({
    appId: 'app',
    agentId: 'bot',
    balance: { provider: new StaticBalanceProvider() },
    transfer: { executor: new MemoryPaymentRail() },
    idempotency: new MemoryIdempotencyStore(),
    sanctions: new NoopSanctionsScreener(),
    ceilings: new MemoryCeilingStore(),
    evidenceSigner: signer,
  });

  it('reads limits given as decimal strings or as Money in other decimals', async () => {
    const kit = createTreasuryKit({
      ...base(),
      policy: {
        dailyLimit: { USD: { amount: 10_000_000_000n, currency: 'USD', decimals: 6 } },
        perTransactionMax: { JPY: '5000' },
      },
    });
    expect((await kit.ceilings.usage('USD')).dailyLimit).toEqual({
      amount: 1_000_000n,
      currency: 'USD',
      decimals: 2,
    });
    expect((await kit.ceilings.usage('JPY')).perTransactionMax).toEqual({
      amount: 5000n,
      currency: 'JPY',
      decimals: 0,
    });
  });

  it('refuses malformed settings with config_invalid naming the field', () => {
    const cases: Array<[object, RegExp]> = [
      [
        { policy: { dailyLimit: { USD: '1,000' } } },
        /policy\.dailyLimit\.USD.*thousands separator/,
      ],
      [
        { policy: { dualApprovalThreshold: { XYZ: '10' } } },
        /policy\.dualApprovalThreshold\.XYZ.*Unknown currency/,
      ],
      [
        { policy: { perTransactionMax: { USD: { amount: 5n, currency: 'EUR', decimals: 2 } } } },
        /in EUR, not USD/,
      ],
      [
        { timeLock: { delayMs: 60_000, maxWaitMs: 1000 } },
        /delayMs \(60000\) ≤ maxWaitMs \(1000\)/,
      ],
      [{ timeLock: { maxWaitMs: 119_000 } }, /transfer\.timeoutMs/],
      [{ agentId: '' }, /non-empty agentId/],
      [{ currencies: { XAU: 99 } }, /XAU.*99 decimals/],
    ];
    for (const [override, message] of cases) {
      expect(() => createTreasuryKit({ ...base(), ...override })).toThrow(
        expect.objectContaining({
          code: 'config_invalid',
          message: expect.stringMatching(message),
        }),
      );
    }
  });
});
