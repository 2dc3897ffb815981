import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ApprovalManager,
  type ApprovalStore,
  MemoryApprovalStore,
  PostgresApprovalStore,
} from '../../src/approvals/index.js';
import {
  AuditLog,
  canonicalJson,
  decisionSigningMessage,
  Ed25519Signer,
  preAuthEncoding,
} from '../../src/audit/index.js';
import { VeridexError, type VeridexErrorCode } from '../../src/errors/index.js';
import {
  type ApproverDirectory,
  MemoryApproverDirectory,
  PostgresApproverDirectory,
  type SignedDecision,
} from '../../src/identity/index.js';
import { buildToolProposal, type PolicyDecision } from '../../src/policy/index.js';
import type { AnyGovernedTool } from '../../src/tools/index.js';
import { signAs, testApproverInits, testKey } from '../support/approvers.js';
import { describeEachDatabase } from '../support/databases.js';

const transferTool = {
  name: 'transfer',
  schemaHash: 'a'.repeat(64),
  safetyClass: 'financial',
  trust: 'local',
} as unknown as AnyGovernedTool;

const START = Date.parse('2026-03-02T09:00:00Z');

function proposal(toolCallId = 'call_1', proposer = 'payout-bot', amount = '50000.00') {
  return buildToolProposal({
    tool: transferTool,
    arguments: { to: 'acme', amount, currency: 'USD' },
    threadId: 'thread-sig',
    runId: 'run-1',
    toolCallId,
    proposer,
  });
}

function escalate(
  route: 'human_required' | 'dual_approval' | 'policy_pack',
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

async function refusedWith(promise: Promise<unknown>, code: VeridexErrorCode): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(VeridexError.is(error), `expected ${code}, got ${String(error)}`).toBe(true);
  expect((error as VeridexError).code).toBe(code);
}

/** Re-signs an edited statement with `name`'s key (an attacker who holds that key). */
function resign(signed: SignedDecision, name: string, edit: (s: SignedDecision) => void) {
  const copy = structuredClone(signed);
  edit(copy);
  copy.signature = Buffer.from(
    new Ed25519Signer(testKey(name)).sign(decisionSigningMessage(copy.statement)),
  ).toString('base64');
  return copy;
}

function identityContract(
  makeStore: () => ApprovalStore,
  makeDirectory: () => Promise<ApproverDirectory>,
) {
  let now = START;
  async function setup(options: { identity?: 'unverified'; operators?: string[] } = {}) {
    now = START;
    const audit = new AuditLog({ now: () => new Date(now) });
    const directory = await makeDirectory();
    const manager = new ApprovalManager({
      store: makeStore(),
      audit,
      approvers: directory,
      packs: {
        finance: {
          tiers: [{ name: 'finance', approvers: ['role:finance'], timeoutMs: 3_600_000 }],
        },
      },
      now: () => new Date(now),
      ...options,
    });
    const security = async () =>
      (await audit.events('thread-sig'))
        .filter((event) => event.type === 'security_event')
        .map((event) => event.payload.kind);
    return { audit, manager, directory, security };
  }
  const at = (offsetMs = 0) => ({ decidedAt: new Date(START + offsetMs) });

  it('does not let one caller complete a dual approval with bare names', async () => {
    const { manager, security } = await setup();
    const request = await manager.request(proposal(), escalate('dual_approval'));
    for (const approver of ['alice', 'bob']) {
      await refusedWith(
        manager.decide(request.id, { decision: 'approve', approver }),
        'decision_unsigned',
      );
    }
    const after = await manager.require(request.id);
    expect(after.status).toBe('pending');
    expect(after.decisions).toEqual([]);
    expect(await security()).toEqual(['decision_unsigned', 'decision_unsigned']);
  });

  it('refuses a forged decision: bob named, signed with alice’s key', async () => {
    const { manager, security } = await setup();
    const request = await manager.request(proposal(), escalate('dual_approval'));
    await manager.decide(request.id, signAs(request, 'alice', 'approve', at()));
    await refusedWith(
      manager.decide(request.id, signAs(request, 'alice', 'approve', { ...at(), approver: 'bob' })),
      'decision_key_unknown',
    );
    expect((await manager.require(request.id)).decisions.map((d) => d.approver)).toEqual(['alice']);
    expect(await security()).toEqual(['decision_key_unknown']);
  });

  it('refuses a key nobody registered, and a tampered signature', async () => {
    const { manager } = await setup();
    const request = await manager.request(proposal(), escalate('human_required'));
    await refusedWith(
      manager.decide(
        request.id,
        signAs(request, 'mallory', 'approve', { ...at(), approver: 'alice' }),
      ),
      'decision_key_unknown',
    );
    const honest = signAs(request, 'alice', 'approve', at());
    const flipped = Buffer.from(honest.signature, 'base64');
    flipped[5]! ^= 1;
    await refusedWith(
      manager.decide(request.id, { ...honest, signature: flipped.toString('base64') }),
      'decision_signature_invalid',
    );
    // The statement changed after signing: reject → approve, and the signature no longer fits.
    const rejected = signAs(request, 'alice', 'reject', { ...at(), reason: 'no' });
    await refusedWith(
      manager.decide(request.id, {
        ...rejected,
        statement: { ...rejected.statement, decision: 'approve' },
      }),
      'decision_signature_invalid',
    );
    expect((await manager.require(request.id)).status).toBe('pending');
  });

  it('does not accept a signature made for anything but a decision (domain separation)', async () => {
    const { manager } = await setup();
    const request = await manager.request(proposal(), escalate('human_required'));
    const decision = signAs(request, 'alice', 'approve', at());
    // alice's key signing the same statement bytes as an evidence payload, not as a decision.
    const other = preAuthEncoding(
      'application/vnd.veridex.evidence+json',
      new TextEncoder().encode(canonicalJson(decision.statement)),
    );
    const signature = Buffer.from(new Ed25519Signer(testKey('alice')).sign(other)).toString(
      'base64',
    );
    await refusedWith(
      manager.decide(request.id, { ...decision, signature }),
      'decision_signature_invalid',
    );
  });

  it('binds a decision to one approval and one proposal', async () => {
    const { manager, security } = await setup();
    const first = await manager.request(proposal('call_a'), escalate('human_required'));
    const second = await manager.request(
      proposal('call_b', 'payout-bot', '49999.00'),
      escalate('human_required'),
    );
    const forFirst = signAs(first, 'alice', 'approve', at());
    // Replayed onto another request.
    await refusedWith(manager.decide(second.id, forFirst), 'decision_mismatch');
    // Signed for what an attacker showed (another proposal hash), sent to the real request.
    await refusedWith(
      manager.decide(
        first.id,
        signAs({ id: first.id, proposalHash: second.proposalHash }, 'alice', 'approve', at()),
      ),
      'decision_mismatch',
    );
    expect((await manager.require(second.id)).decisions).toEqual([]);
    expect(await security()).toEqual(['decision_mismatch', 'decision_mismatch']);
    expect((await manager.decide(first.id, forFirst)).status).toBe('approved');
  });

  it('refuses a reused nonce, a reason or arguments other than signed, and a stale time', async () => {
    const { manager } = await setup();
    const request = await manager.request(proposal(), escalate('dual_approval'));
    const alice = signAs(request, 'alice', 'approve', { ...at(), reason: 'checked the invoice' });
    await manager.decide(request.id, alice);
    // bob's statement copied with alice's nonce (bob signs it: the nonce is what is reused).
    const reused = resign(signAs(request, 'bob', 'approve', at()), 'bob', (copy) => {
      copy.statement.nonce = alice.statement.nonce;
    });
    await refusedWith(manager.decide(request.id, reused), 'decision_nonce_reused');
    await refusedWith(
      manager.decide(request.id, {
        ...signAs(request, 'bob', 'approve', { ...at(), reason: 'fine' }),
        reason: 'fine, and also pay mallory',
      }),
      'decision_mismatch',
    );
    await refusedWith(
      manager.decide(request.id, signAs(request, 'bob', 'approve', at(10 * 60_000))),
      'decision_stale',
    );
    await refusedWith(
      manager.decide(request.id, signAs(request, 'bob', 'approve', at(-10 * 60_000))),
      'decision_stale',
    );
    const edit = signAs(request, 'bob', 'edit', {
      ...at(),
      editedArgs: { to: 'acme', amount: '9000.00', currency: 'USD' },
    });
    await refusedWith(
      manager.decide(request.id, {
        ...edit,
        editedArgs: { to: 'mallory', amount: '9000.00', currency: 'USD' },
      }),
      'decision_mismatch',
    );
    expect((await manager.require(request.id)).decisions).toHaveLength(1);
    // A replay of alice's own statement is recognised, not counted again.
    expect((await manager.decide(request.id, alice)).decisions).toHaveLength(1);
    expect((await manager.decide(request.id, signAs(request, 'bob', 'approve', at()))).status).toBe(
      'approved',
    );
  });

  it('never counts the proposer, whatever the spelling, nor the agent’s operators', async () => {
    // payout-bot holds a registered key: being an approver does not make it count on its own proposal.
    const { manager } = await setup({ operators: ['ops@example.com'] });
    const request = await manager.request(proposal(), escalate('dual_approval'));
    expect(request.proposers).toEqual(['payout-bot', 'ops@example.com']);
    await refusedWith(
      manager.decide(
        request.id,
        signAs(request, 'payout-bot', 'approve', { ...at(), approver: 'payout-bot ' }),
      ),
      'proposer_cannot_approve',
    );
    await refusedWith(
      manager.decide(request.id, signAs(request, 'ops@example.com', 'approve', at())),
      'proposer_cannot_approve',
    );
    expect((await manager.require(request.id)).decisions).toEqual([]);
  });

  it('refuses to register a second approver who looks like an existing one', async () => {
    const { directory } = await setup();
    for (const spoof of ['Alice', 'ALICE', ' alice', '\u0430lice', 'alice\u200b', 'a1ice']) {
      await refusedWith(
        directory.add({ id: spoof, publicKeys: [await publicKeyOf(`spoof-${spoof}`)] }),
        'identity_ambiguous',
      );
    }
    // One key belongs to one approver.
    await refusedWith(
      directory.add({ id: 'dave', publicKeys: [await publicKeyOf('alice')] }),
      'identity_ambiguous',
    );
    expect((await directory.get('ALICE '))?.id).toBe('alice');
    expect((await directory.list()).map((approver) => approver.id)).toContain('alice');
  });

  it('stops counting a revoked key or approver; decisions recorded before stay recorded', async () => {
    const { manager, directory } = await setup();
    const request = await manager.request(proposal(), escalate('dual_approval'));
    const alice = signAs(request, 'alice', 'approve', at());
    await manager.decide(request.id, alice);
    const bobKey = (await directory.get('bob'))!.keys[0]!.keyId;
    await directory.revoke('bob', { keyId: bobKey });
    await refusedWith(
      manager.decide(request.id, signAs(request, 'bob', 'approve', at())),
      'decision_key_unknown',
    );
    await directory.revoke('carol');
    await refusedWith(
      manager.decide(request.id, signAs(request, 'carol', 'approve', at())),
      'approver_unknown',
    );
    await directory.revoke('alice');
    // alice's decision, recorded before her revocation, stays in the row (and replays stay
    // no-ops); the proof before a call runs no longer counts it (README, signed decisions).
    const current = await manager.decide(request.id, alice);
    expect(current.decisions.map((d) => d.approver)).toEqual(['alice']);
  });

  it('keeps a secret an approver pasted into a reason out of the stored request, signature intact', async () => {
    const { manager, audit } = await setup();
    const secret = 'vault-Zq8Lm3Np7Rt2Vx9Kc4Hd6Jf1';
    audit.scrubber.register('VAULT_TOKEN', secret);
    const request = await manager.request(proposal(), escalate('human_required'));
    const decided = await manager.decide(
      request.id,
      signAs(request, 'alice', 'approve', { ...at(), reason: `approved, token ${secret}` }),
    );
    expect(decided.status).toBe('approved');
    const stored = JSON.stringify(await manager.store.get(request.id));
    expect(stored).not.toContain(secret);
    expect(stored).toContain('[REDACTED:VAULT_TOKEN]');
    expect(decided.decisions[0]?.verified).toBe(true);
  });

  it('lets tiers name roles from the directory', async () => {
    const { manager, directory } = await setup();
    await directory.add({
      id: 'fran',
      roles: ['Finance'],
      publicKeys: [await publicKeyOf('fran')],
    });
    const request = await manager.request(proposal(), escalate('policy_pack', { pack: 'finance' }));
    await refusedWith(
      manager.decide(request.id, signAs(request, 'alice', 'approve', at())),
      'approver_not_allowed',
    );
    expect((await manager.listPending({ approver: 'FRAN' })).map((r) => r.id)).toEqual([
      request.id,
    ]);
    expect(await manager.listPending({ approver: 'alice' })).toEqual([]);
    expect(
      (await manager.decide(request.id, signAs(request, 'fran', 'approve', at()))).status,
    ).toBe('approved');
  });

  it('counts bare names only on requests opened in the unverified development mode, marked unverified', async () => {
    const dev = await setup({ identity: 'unverified' });
    const request = await dev.manager.request(proposal(), escalate('dual_approval'));
    expect(request.identityMode).toBe('unverified');
    for (const spoof of ['payout-bot', 'Payout-Bot', 'payout-bot ']) {
      await refusedWith(
        dev.manager.decide(request.id, { decision: 'approve', approver: spoof }),
        'proposer_cannot_approve',
      );
    }
    await dev.manager.decide(request.id, { decision: 'approve', approver: 'alice' });
    for (const spoof of ['Alice', 'ALICE', ' alice', '\u0430lice', 'alice\u200b']) {
      await refusedWith(
        dev.manager.decide(request.id, { decision: 'approve', approver: spoof }),
        'approver_duplicate',
      );
    }
    const done = await dev.manager.decide(request.id, { decision: 'approve', approver: 'bob' });
    expect(done.status).toBe('approved');
    expect(done.decisions.map((d) => [d.approver, d.verified])).toEqual([
      ['alice', false],
      ['bob', false],
    ]);
    const decided = (await dev.audit.events('thread-sig')).filter(
      (event) => event.type === 'approval_decided',
    );
    expect(decided.map((event) => event.payload.verified)).toEqual([false, false]);
  });

  it('keeps the mode a request was opened in, whatever the deciding process is configured for', async () => {
    const store = makeStore();
    const directory = await makeDirectory();
    // One audit log for both processes: a manager over a database needs the log it records in.
    const audit = new AuditLog();
    const strict = new ApprovalManager({ store, audit, approvers: directory });
    const lax = new ApprovalManager({ store, audit, approvers: directory, identity: 'unverified' });
    const request = await strict.request(proposal(), escalate('human_required'));
    await refusedWith(
      lax.decide(request.id, { decision: 'approve', approver: 'alice' }),
      'decision_unsigned',
    );
    expect((await strict.require(request.id)).status).toBe('pending');
  });

  it('refuses any single changed byte of a signed decision (property)', async () => {
    const { manager } = await setup();
    const request = await manager.request(proposal(), escalate('dual_approval'));
    const signed = signAs(request, 'alice', 'approve', { ...at(), reason: 'invoice checked' });
    const text = canonicalJson(signed);
    await fc.assert(
      fc.asyncProperty(
        fc.nat({ max: text.length - 1 }),
        fc.constantFrom(...'abcdefABCDEF0123456789+/=_-:."{}, zq'.split('')),
        async (position, replacement) => {
          fc.pre(text[position] !== replacement);
          let forged: unknown;
          try {
            forged = JSON.parse(text.slice(0, position) + replacement + text.slice(position + 1));
          } catch {
            return; // not JSON: never reaches a manager
          }
          const error = await manager.decide(request.id, forged as SignedDecision).then(
            () => undefined,
            (caught: unknown) => caught,
          );
          expect(VeridexError.is(error), `byte ${position} → ${replacement} was accepted`).toBe(
            true,
          );
        },
      ),
      { numRuns: 300 },
    );
    expect((await manager.require(request.id)).decisions).toEqual([]);
    expect((await manager.decide(request.id, signed)).decisions).toHaveLength(1);
  });
}

async function publicKeyOf(name: string): Promise<Uint8Array> {
  return new Ed25519Signer(testKey(name)).publicKey;
}

const TEAM = ['alice', 'bob', 'carol', 'ops@example.com', 'payout-bot'];

describe('signed decisions in memory', () => {
  identityContract(
    () => new MemoryApprovalStore(),
    async () => new MemoryApproverDirectory(testApproverInits(TEAM)),
  );
});

describeEachDatabase('signed decisions in the database', ({ db }) => {
  identityContract(
    () => new PostgresApprovalStore(db()),
    async () => {
      const directory = new PostgresApproverDirectory(db());
      for (const init of testApproverInits(TEAM)) await directory.add(init);
      return directory;
    },
  );
});
