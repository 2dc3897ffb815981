import { describe, expect, it } from 'vitest';
import { ApprovalManager } from '../../src/approvals/index.js';
import { AuditLog, MemoryAuditStore } from '../../src/audit/index.js';
import {
  buildHandoffProposal,
  buildMemoryWriteProposal,
  type Proposal,
} from '../../src/policy/index.js';
import { escalate, transferProposal } from '../support/proposals.js';

const memoryWrite = buildMemoryWriteProposal({
  threadId: 't-memory',
  runId: 'r',
  proposer: 'agent',
  writeId: 'w1',
  tier: 'semantic',
  namespace: ['default'],
  content: 'The vendor IBAN is DE89 3704 0044 0532 0130 00',
  confidence: 0.9,
  source: 'user',
  tags: ['vendor'],
  texts: ['The vendor IBAN is DE89 3704 0044 0532 0130 00'],
});
const handoff = buildHandoffProposal({
  threadId: 't-handoff',
  runId: 'r',
  proposer: 'agent',
  from: 'triage',
  to: 'payments',
  payloadHash: 'b'.repeat(64),
  tokenCount: 120,
});

async function opened(proposal: Proposal) {
  const audit = new AuditLog({ store: new MemoryAuditStore() });
  const approvals = new ApprovalManager({ audit, identity: 'unverified' });
  const request = await approvals.request(proposal, escalate('human_required'));
  return { approvals, audit, request };
}

describe('ApprovalManager.shownProposal', () => {
  it.each([
    ['a tool call', transferProposal('t-tool')],
    ['a memory write', memoryWrite],
    ['a hand-off', handoff],
  ] as const)(
    'shows %s as stored, bound by its hash, with only the hashed fields',
    async (_kind, proposal) => {
      const { approvals, request } = await opened(proposal);
      const shown = await approvals.shownProposal(request);
      expect(shown.binding).toBe('hash');
      // Fields the hash does not cover (run id, proposer, a memory write's texts) are not shown.
      expect(shown.binding !== 'none' && Object.keys(shown.proposal)).not.toContain('runId');
      expect(shown.binding !== 'none' && Object.keys(shown.proposal)).not.toContain('texts');
    },
  );

  it.each([
    ['an argument', { arguments: { to: 'acme-suppliers', amount: '50.00', currency: 'USD' } }],
    ['the thread', { threadId: 't-other' }],
    ['the call id', { toolCallId: 'call_2' }],
    ['the kind', { kind: 'note' }],
    ['the arguments’ shape', { arguments: ['50.00'] }],
  ])(
    'binds nothing once %s of the stored envelope is edited, and records it',
    async (_what, edit) => {
      const { approvals, audit, request } = await opened(transferProposal('t-edited'));
      const tampered = { ...request, proposal: { ...request.proposal, ...edit } };
      const shown = await approvals.shownProposal(tampered);
      expect(shown.binding).toBe('none');
      await expect(approvals.requireShownProposal(tampered)).rejects.toMatchObject({
        code: 'proposal_tampered',
      });
      const events = await audit.events('t-edited');
      expect(events.filter((event) => event.payload.kind === 'proposal_tampered')).toHaveLength(1);
    },
  );

  it('binds nothing once a memory write’s content is edited', async () => {
    const { approvals, request } = await opened(memoryWrite);
    const shown = await approvals.shownProposal({
      ...request,
      proposal: { ...request.proposal, content: 'The vendor IBAN is GB33 BUKB 2020 1555 5555 55' },
    });
    expect(shown.binding).toBe('none');
  });

  it('does not list an edited request as one an approver may decide', async () => {
    const { approvals, request } = await opened(transferProposal('t-listed'));
    await approvals.store.update(request.id, (current) => ({
      next: {
        ...current,
        proposal: { ...current.proposal, arguments: { amount: '50.00' } },
      },
      result: undefined,
    }));
    expect(await approvals.listPending({ approver: 'bob' })).toEqual([]);
    expect((await approvals.listPending()).map((pending) => pending.id)).toEqual([request.id]);
  });
});
