import { describe, expect, it } from 'vitest';
import {
  ApprovalManager,
  type ApprovalPack,
  type ApprovalStore,
  MemoryApprovalStore,
  PostgresApprovalStore,
} from '../../src/approvals/index.js';
import { AuditLog } from '../../src/audit/index.js';
import { VeridexError, type VeridexErrorCode } from '../../src/errors/index.js';
import { MemoryApproverDirectory } from '../../src/identity/index.js';
import { buildToolProposal, type PolicyDecision } from '../../src/policy/index.js';
import type { AnyGovernedTool } from '../../src/tools/index.js';
import { signAs, testApproverInits } from '../support/approvers.js';
import { describeEachDatabase } from '../support/databases.js';

// Only the fields a proposal reads; the approvals module never executes the tool.
const transferTool = {
  name: 'transfer',
  schemaHash: 'a'.repeat(64),
  safetyClass: 'financial',
  trust: 'local',
} as unknown as AnyGovernedTool;

function proposal(toolCallId = 'call_1', amount = '50000.00') {
  return buildToolProposal({
    tool: transferTool,
    arguments: { to: 'acme', amount, currency: 'USD' },
    threadId: 'thread-1',
    runId: 'run-1',
    toolCallId,
    proposer: 'payout-bot',
  });
}

function escalate(
  route: 'human_required' | 'dual_approval' | 'policy_pack' | 'auto',
  extra: Partial<PolicyDecision> = {},
) {
  return {
    verdict: 'escalate',
    route,
    reason: 'needs approval',
    ruleId: 'rule.x',
    ruleName: 'Rule X',
    evaluations: [],
    ...extra,
  } as Extract<PolicyDecision, { verdict: 'escalate' }>;
}

const PACK: ApprovalPack = {
  tiers: [
    { name: 'team-lead', approvers: ['lead'], timeoutMs: 15 * 60_000 },
    { name: 'finance', approvers: ['cfo', 'controller'], timeoutMs: 60 * 60_000 },
  ],
};

async function expectCode(promise: Promise<unknown>, code: VeridexErrorCode) {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(VeridexError.is(error), `expected ${code}, got ${String(error)}`).toBe(true);
  expect((error as VeridexError).code).toBe(code);
  return error as VeridexError;
}

const TEAM = ['alice', 'bob', 'carol', 'lead', 'cfo', 'controller'];

function approvalContract(makeStore: () => ApprovalStore, open?: () => Promise<ApprovalStore>) {
  function setup(options: { now?: () => Date; identity?: 'unverified' } = {}) {
    const audit = new AuditLog();
    const manager = new ApprovalManager({
      store: makeStore(),
      audit,
      approvers: testApproverInits([...TEAM, 'payout-bot']),
      packs: { 'treasury-high-value': PACK },
      ...options,
    });
    return { audit, manager };
  }

  it('returns the same request when a re-run node asks again', async () => {
    const { manager, audit } = setup();
    const first = await manager.request(proposal(), escalate('human_required'));
    const again = await manager.request(proposal(), escalate('human_required'));
    expect(again).toEqual(first);
    expect(first.status).toBe('pending');
    expect(first.proposalHash).toBe(proposal().hash);
    const events = await audit.events('thread-1');
    expect(events.filter((event) => event.type === 'approval_requested')).toHaveLength(1);
  });

  it('approves a human_required request with one approver', async () => {
    const { manager, audit } = setup();
    const request = await manager.request(proposal(), escalate('human_required'));
    const decided = await manager.decide(
      request.id,
      signAs(request, 'alice', 'approve', { reason: 'ok' }),
    );
    expect(decided.status).toBe('approved');
    expect(decided.decisions.map((d) => d.approver)).toEqual(['alice']);
    const types = (await audit.events('thread-1')).map((event) => event.type);
    expect(types).toEqual(['approval_requested', 'approval_decided', 'approval_resolved']);
  });

  it('needs two distinct approvers for dual approval and never counts the proposer', async () => {
    const { manager, audit } = setup();
    const request = await manager.request(proposal(), escalate('dual_approval'));
    await expectCode(
      manager.decide(request.id, signAs(request, 'payout-bot', 'approve')),
      'proposer_cannot_approve',
    );
    expect((await manager.decide(request.id, signAs(request, 'alice', 'approve'))).status).toBe(
      'pending',
    );
    await expectCode(
      manager.decide(request.id, signAs(request, 'alice', 'approve')),
      'approver_duplicate',
    );
    const done = await manager.decide(request.id, signAs(request, 'bob', 'approve'));
    expect(done.status).toBe('approved');
    expect(done.decisions.map((d) => d.approver)).toEqual(['alice', 'bob']);
    const security = (await audit.events('thread-1')).filter(
      (event) => event.type === 'security_event',
    );
    expect(security.map((event) => event.payload.kind)).toEqual([
      'proposer_cannot_approve',
      'approver_duplicate',
    ]);
  });

  it('ends a request on the first rejection and refuses later decisions', async () => {
    const { manager } = setup();
    const request = await manager.request(proposal(), escalate('dual_approval'));
    expect(
      (
        await manager.decide(
          request.id,
          signAs(request, 'alice', 'reject', { reason: 'unknown vendor' }),
        )
      ).status,
    ).toBe('rejected');
    await expectCode(
      manager.decide(request.id, signAs(request, 'bob', 'approve')),
      'approval_already_decided',
    );
  });

  it('records an edit with the replacement arguments', async () => {
    const { manager } = setup();
    const request = await manager.request(proposal(), escalate('human_required'));
    const edited = await manager.decide(
      request.id,
      signAs(request, 'alice', 'edit', {
        editedArgs: { to: 'acme', amount: '40000.00', currency: 'USD' },
      }),
    );
    expect(edited.status).toBe('edited');
    expect(edited.decisions[0]?.editedArgs).toEqual({
      to: 'acme',
      amount: '40000.00',
      currency: 'USD',
    });
  });

  it('rejects malformed and unknown decisions with their codes', async () => {
    const { manager } = setup();
    const request = await manager.request(proposal(), escalate('human_required'));
    await expectCode(
      manager.decide(request.id, { decision: 'maybe' as never, approver: 'alice' }),
      'resume_payload_invalid',
    );
    await expectCode(
      manager.decide(request.id, { decision: 'approve', approver: '' }),
      'resume_payload_invalid',
    );
    await expectCode(
      manager.decide(request.id, { decision: 'edit', approver: 'alice' }),
      'resume_payload_invalid',
    );
    await expectCode(
      manager.decide('apr_forged', { decision: 'approve', approver: 'alice' }),
      'approval_not_found',
    );
    expect((await manager.require(request.id)).status).toBe('pending');
  });

  it('counts a replayed signed decision once', async () => {
    const { manager } = setup();
    const request = await manager.request(proposal(), escalate('dual_approval'));
    const signed = signAs(request, 'alice');
    await manager.decide(request.id, signed);
    const replay = await manager.decide(request.id, signed);
    expect(replay.decisions).toHaveLength(1);
    expect(replay.status).toBe('pending');
  });

  it('treats a replayed decision id as a no-op in the unverified development mode', async () => {
    const { manager } = setup({ identity: 'unverified' });
    const request = await manager.request(proposal(), escalate('dual_approval'));
    await manager.decide(request.id, {
      decision: 'approve',
      approver: 'alice',
      decisionId: 'resume-1:0',
    });
    const replay = await manager.decide(request.id, {
      decision: 'approve',
      approver: 'alice',
      decisionId: 'resume-1:0',
    });
    expect(replay.decisions).toHaveLength(1);
    expect(replay.decisions[0]?.verified).toBe(false);
    expect(replay.status).toBe('pending');
  });

  it('expires a request at its deadline, at decision time and by sweep', async () => {
    let now = Date.parse('2026-01-01T00:00:00Z');
    const { manager, audit } = setup({ now: () => new Date(now) });
    const a = await manager.request(
      proposal('call_a'),
      escalate('human_required', { timeoutMs: 60_000 }),
    );
    const b = await manager.request(
      proposal('call_b'),
      escalate('human_required', { timeoutMs: 60_000 }),
    );
    now += 60_000;
    await expectCode(
      manager.decide(a.id, signAs(a, 'alice', 'approve', { decidedAt: new Date(now) })),
      'approval_expired',
    );
    expect((await manager.require(a.id)).status).toBe('expired');
    const swept = await manager.sweep();
    expect(swept.map((request) => request.id)).toEqual([b.id]);
    expect(swept[0]?.status).toBe('expired');
    const resolved = (await audit.events('thread-1')).filter(
      (event) => event.type === 'approval_resolved',
    );
    expect(resolved.map((event) => event.payload.status)).toEqual(['expired', 'expired']);
  });

  it('escalates a policy pack tier by tier, then auto-denies', async () => {
    let now = Date.parse('2026-01-01T00:00:00Z');
    const { manager } = setup({ now: () => new Date(now) });
    const request = await manager.request(
      proposal(),
      escalate('policy_pack', { pack: 'treasury-high-value' }),
    );
    await expectCode(
      manager.decide(request.id, signAs(request, 'cfo', 'approve', { decidedAt: new Date(now) })),
      'approver_not_allowed',
    );
    expect((await manager.listPending({ approver: 'lead' })).map((r) => r.id)).toEqual([
      request.id,
    ]);
    expect(await manager.listPending({ approver: 'cfo' })).toEqual([]);

    now += 15 * 60_000; // tier 1 times out
    await expectCode(
      manager.decide(request.id, signAs(request, 'lead', 'approve', { decidedAt: new Date(now) })),
      'approver_not_allowed',
    );
    const atFinance = await manager.require(request.id);
    expect(atFinance.tierIndex).toBe(1);
    expect(atFinance.expiresAt).toBe(
      new Date(Date.parse('2026-01-01T00:00:00Z') + 75 * 60_000).toISOString(),
    );

    now += 60 * 60_000; // tier 2 times out: the final action is deny
    await expectCode(
      manager.decide(request.id, signAs(request, 'cfo', 'approve', { decidedAt: new Date(now) })),
      'approval_expired',
    );
  });

  it('approves a policy pack at the tier in force', async () => {
    let now = Date.parse('2026-01-01T00:00:00Z');
    const { manager } = setup({ now: () => new Date(now) });
    const request = await manager.request(
      proposal(),
      escalate('policy_pack', { pack: 'treasury-high-value' }),
    );
    now += 20 * 60_000;
    expect(
      (
        await manager.decide(
          request.id,
          signAs(request, 'controller', 'approve', { decidedAt: new Date(now) }),
        )
      ).status,
    ).toBe('approved');
  });

  it('refuses to open a request for an unknown policy pack', async () => {
    const { manager } = setup();
    await expectCode(
      manager.request(proposal(), escalate('policy_pack', { pack: 'nope' })),
      'config_invalid',
    );
  });

  it('approves the auto route immediately', async () => {
    const { manager } = setup();
    expect((await manager.request(proposal(), escalate('auto'))).status).toBe('approved');
  });

  if (open) {
    it('gives one consistent outcome when two connections decide at once', async () => {
      const audit = new AuditLog();
      const approvers = testApproverInits(TEAM);
      const one = new ApprovalManager({ store: makeStore(), audit, approvers });
      const two = new ApprovalManager({ store: await open(), audit, approvers });
      for (let round = 0; round < 5; round++) {
        const request = await one.request(proposal(`race_${round}`), escalate('dual_approval'));
        // Same approver from two processes: exactly one wins.
        const sameApprover = await Promise.allSettled([
          one.decide(request.id, signAs(request, 'alice', 'approve')),
          two.decide(request.id, signAs(request, 'alice', 'approve')),
        ]);
        expect(sameApprover.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
        // Approve and reject racing: whichever is second sees the first.
        const racing = await Promise.allSettled([
          one.decide(request.id, signAs(request, 'bob', 'approve')),
          two.decide(request.id, signAs(request, 'carol', 'reject')),
        ]);
        const final = await one.require(request.id);
        expect(final.decisions).toHaveLength(2);
        expect(['approved', 'rejected']).toContain(final.status);
        expect(racing.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
      }
    });
  }
}

describe('ApprovalManager in memory', () => {
  approvalContract(() => new MemoryApprovalStore());
});

describe('approver lists that cannot be compared', () => {
  it('refuses a configured tier or allowlist entry that is not a valid identity (config_invalid)', () => {
    for (const options of [
      { packs: { broken: { tiers: [{ name: 't', approvers: ['role:'], timeoutMs: 1000 }] } } },
      { allow: { dual_approval: ['alice', '\u200b'] } },
    ]) {
      expect(() => new ApprovalManager(options)).toThrow(
        expect.objectContaining({ code: 'config_invalid' }),
      );
    }
  });

  it('refuses a pack from plain JavaScript or JSON whose tiers could never expire or need no one (config_invalid)', () => {
    const tier = { name: 't', approvers: ['alice'], timeoutMs: 1000 };
    for (const broken of [
      { tiers: [] },
      { tiers: [{ ...tier, timeoutMs: undefined }] },
      { tiers: [{ ...tier, timeoutMs: Number.POSITIVE_INFINITY }] },
      { tiers: [{ ...tier, timeoutMs: -5 }] },
      { tiers: [{ ...tier, requiredApprovals: 0 }] },
      { tiers: [{ ...tier, requiredApprovals: 1.5 }] },
      { tiers: [{ ...tier, approvers: 'alice' }] },
    ]) {
      expect(() => new ApprovalManager({ packs: { broken } as never })).toThrow(
        expect.objectContaining({ code: 'config_invalid' }),
      );
    }
    expect(() => new ApprovalManager({ packs: { fine: { tiers: [tier] } } })).not.toThrow();
  });

  it('lists a request for an approver only when a decision by them would be accepted', async () => {
    // An insider wrote an uncomparable role into the directory and into the request's tier:
    // the listing must apply the decision's rule, under which nothing uncomparable matches.
    const store = new MemoryApprovalStore();
    const directory = new MemoryApproverDirectory(testApproverInits(TEAM));
    const listed = directory.get.bind(directory);
    directory.get = async (id) => {
      const approver = await listed(id);
      return approver && approver.id === 'carol' ? { ...approver, roles: ['\u0000'] } : approver;
    };
    const manager = new ApprovalManager({ store, audit: new AuditLog(), approvers: directory });
    const request = await manager.request(proposal(), escalate('human_required'));
    await store.update(request.id, (current) => ({
      next: { ...current, tiers: [{ ...current.tiers[0]!, approvers: ['role:\u0000'] }] },
      result: undefined,
    }));
    expect(await manager.listPending({ approver: 'carol' })).toEqual([]);
    await expectCode(manager.decide(request.id, signAs(request, 'carol')), 'approver_not_allowed');
  });
});

describeEachDatabase('ApprovalManager on PostgresApprovalStore', ({ db, open }) => {
  approvalContract(
    () => new PostgresApprovalStore(db()),
    async () => new PostgresApprovalStore(await open()),
  );
});
