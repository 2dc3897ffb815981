import { describe, expect, it } from 'vitest';
import { ApprovalManager } from '../../src/approvals/index.js';
import {
  AuditLog,
  Ed25519Signer,
  generateKeyPair,
  sealEvidence,
  type TraceEvent,
  verifyEvidence,
} from '../../src/audit/index.js';
import { MemoryApproverDirectory } from '../../src/identity/index.js';
import { signAs, testApproverInits, testKey } from '../support/approvers.js';
import { escalate, transferProposal } from '../support/proposals.js';
import { rewriteEvents } from '../support/rechain.js';

const agent = new Ed25519Signer(generateKeyPair().privateKey);
const TEAM = ['alice', 'bob', 'mallory'];
const trusted = () => new MemoryApproverDirectory(testApproverInits(TEAM)).list();

/** A thread with one dual approval decided by alice and bob (signed), and another request. */
async function decidedThread(options: { identity?: 'unverified' } = {}) {
  const audit = new AuditLog();
  const manager = new ApprovalManager({
    audit,
    approvers: testApproverInits(TEAM),
    ...options,
  });
  const request = await manager.request(
    transferProposal('thread-ev', 'call_1'),
    escalate('dual_approval'),
  );
  const other = await manager.request(
    transferProposal('thread-ev', 'call_2'),
    escalate('dual_approval'),
  );
  if (options.identity === 'unverified') {
    await manager.decide(request.id, { decision: 'approve', approver: 'alice' });
    await manager.decide(request.id, { decision: 'approve', approver: 'bob' });
  } else {
    await manager.decide(request.id, signAs(request, 'alice', 'approve', { reason: 'invoice ok' }));
    await manager.decide(request.id, signAs(request, 'bob'));
    await manager.decide(other.id, signAs(other, 'mallory'));
  }
  return { events: await audit.events('thread-ev'), request, other };
}

/** What an insider with write access to the audit table and the agent's key can produce. */
const rewrite = rewriteEvents;

function seal(events: readonly TraceEvent[]) {
  return JSON.parse(JSON.stringify(sealEvidence({ threadId: 'thread-ev', events }, [agent])));
}

describe('approval decisions in evidence bundles', () => {
  it('shows who approved what, each signature checked against the trusted approvers', async () => {
    const { events, request } = await decidedThread();
    const result = verifyEvidence(seal(events), {
      keys: [agent.verifier()],
      approvers: await trusted(),
    });
    expect(result.reasons).toEqual([]);
    expect(result.valid).toBe(true);
    expect(result.decisions.filter((d) => d.approvalId === request.id)).toEqual([
      expect.objectContaining({
        approver: 'alice',
        decision: 'approve',
        proposalHash: request.proposalHash,
        toolName: 'transfer',
        status: 'valid',
        keyTrusted: true,
        reasonVerified: true,
        keyId: expect.stringMatching(/^ed25519:[0-9a-f]{16}$/),
      }),
      expect.objectContaining({ approver: 'bob', status: 'valid', keyTrusted: true }),
    ]);
    // Without a trusted directory the signatures are still checked, but not who holds the keys.
    const untrusted = verifyEvidence(seal(events), { keys: [agent.verifier()] });
    expect(untrusted.valid).toBe(true);
    expect(untrusted.decisions.every((d) => d.status === 'valid' && !d.keyTrusted)).toBe(true);
  });

  it('detects an insider who renames an approver and re-seals with the agent key', async () => {
    const { events } = await decidedThread();
    const forged = rewrite(events, (list) => {
      const bob = list.find((e) => e.type === 'approval_decided' && e.payload.approver === 'bob')!;
      bob.payload.approver = 'cfo@corp';
      return list;
    });
    const result = verifyEvidence(seal(forged), {
      keys: [agent.verifier()],
      approvers: await trusted(),
    });
    expect(result.valid).toBe(false);
    expect(result.reasons.join('\n')).toMatch(/cfo@corp.*statement names another approver/);
  });

  it('detects a decision statement moved from another approval', async () => {
    const { events, request } = await decidedThread();
    const forged = rewrite(events, (list) => {
      const decisions = list.filter((e) => e.type === 'approval_decided');
      const bob = decisions.find((e) => e.payload.approver === 'bob')!;
      const mallory = decisions.find((e) => e.payload.approver === 'mallory')!;
      // mallory's genuine signed approval of the other request, passed off as one of this request.
      bob.payload = {
        ...mallory.payload,
        approvalId: request.id,
        proposalHash: request.proposalHash,
      };
      return list;
    });
    const result = verifyEvidence(seal(forged), {
      keys: [agent.verifier()],
      approvers: await trusted(),
    });
    expect(result.valid).toBe(false);
    expect(result.reasons.join('\n')).toMatch(/statement names another approval/);
  });

  it('detects a dropped decision: the approval no longer has its quorum', async () => {
    const { events, request } = await decidedThread();
    const forged = rewrite(events, (list) =>
      list.filter((e) => !(e.type === 'approval_decided' && e.payload.approver === 'bob')),
    );
    const result = verifyEvidence(seal(forged), {
      keys: [agent.verifier()],
      approvers: await trusted(),
    });
    expect(result.valid).toBe(false);
    expect(result.reasons).toContain(
      `approval ${request.id} is recorded as approved with 1 counted approval(s) by distinct non-proposers, 2 required`,
    );
  });

  it('detects a decision signed with a key the trusted approvers do not give that person', async () => {
    // An insider registers their own key as bob's in the database directory and signs as bob.
    const rogue = new MemoryApproverDirectory([
      ...testApproverInits(['alice', 'mallory']),
      { id: 'bob', publicKeys: [new Ed25519Signer(testKey('insider')).publicKey] },
    ]);
    const audit = new AuditLog();
    const manager = new ApprovalManager({ audit, approvers: rogue });
    const request = await manager.request(
      transferProposal('thread-ev', 'call_1'),
      escalate('dual_approval'),
    );
    await manager.decide(request.id, signAs(request, 'alice'));
    await manager.decide(request.id, signAs(request, 'insider', 'approve', { approver: 'bob' }));
    const bundle = seal(await audit.events('thread-ev'));
    // The bundle is self-consistent — only the directory the auditor trusts tells it apart.
    expect(verifyEvidence(bundle, { keys: [agent.verifier()] }).valid).toBe(true);
    const result = verifyEvidence(bundle, { keys: [agent.verifier()], approvers: await trusted() });
    expect(result.valid).toBe(false);
    expect(result.reasons.join('\n')).toMatch(/is not a key of "bob" in the trusted approvers/);
  });

  it('refuses approvals of the unverified development mode unless the verifier accepts that mode by name', async () => {
    const { events } = await decidedThread({ identity: 'unverified' });
    const strict = verifyEvidence(seal(events), {
      keys: [agent.verifier()],
      approvers: await trusted(),
    });
    expect(strict.valid).toBe(false);
    expect(strict.reasons.join('\n')).toMatch(/unverified development mode.*allow-unverified/);
  });

  it('marks decisions of the unverified development mode, without calling them forged', async () => {
    const { events } = await decidedThread({ identity: 'unverified' });
    const result = verifyEvidence(seal(events), {
      keys: [agent.verifier()],
      approvers: await trusted(),
      allowUnverified: true,
    });
    expect(result.valid).toBe(true);
    expect(result.decisions.map((d) => [d.approver, d.status])).toEqual([
      ['alice', 'unverified'],
      ['bob', 'unverified'],
    ]);
  });

  it('refuses a decision marked verified that carries no signature', async () => {
    const { events } = await decidedThread({ identity: 'unverified' });
    const forged = rewrite(events, (list) => {
      for (const event of list)
        if (event.type === 'approval_decided') event.payload.verified = true;
      return list;
    });
    const result = verifyEvidence(seal(forged), { keys: [agent.verifier()] });
    expect(result.valid).toBe(false);
    expect(result.reasons.join('\n')).toMatch(/marked verified but carries no signed statement/);
  });
});
