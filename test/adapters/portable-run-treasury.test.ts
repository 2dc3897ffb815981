import { HumanMessage, type ToolMessage } from '@langchain/core/messages';
import { afterEach, expect, it } from 'vitest';
import { exportThread, importThread, type PortableRun } from '../../src/adapters/index.js';
import { canonicalJson, verifyEvidence } from '../../src/audit/index.js';
import type { Database } from '../../src/db/index.js';
import { migrate } from '../../src/db/index.js';
import { VeridexError } from '../../src/errors/index.js';
import {
  type ApprovalsInterrupt,
  pendingApprovalInterrupts,
  resumeThread,
} from '../../src/nodes/index.js';
import { signAs, trustedApprovers } from '../support/approvers.js';
import { describeEachDatabase, openBackend, uniqueSchema } from '../support/databases.js';
import { signer } from '../treasury/kit-fixture.js';
import { PAYOUT_PROMPT, treasuryRun } from './fixtures/treasury-run.js';

const THREAD = 'payout';
const config = { configurable: { thread_id: THREAD } };

const opened: Database[] = [];
afterEach(async () => {
  for (const db of opened.splice(0)) {
    await db.query(`DROP SCHEMA IF EXISTS "${db.schema}" CASCADE`);
    await db.close();
  }
});

/** A fresh, migrated PGlite schema: the machine the run moves to. */
async function freshPglite(): Promise<Database> {
  const db = await openBackend('pglite', uniqueSchema());
  opened.push(db);
  await migrate(db);
  return db;
}

function pending(result: object): ApprovalsInterrupt | undefined {
  return (result as { __interrupt__?: Array<{ value: ApprovalsInterrupt }> }).__interrupt__?.[0]
    ?.value;
}

/** Runs the payout on `db` until it suspends for dual approval; returns the export. */
async function suspendedPayout(db: Database) {
  const source = await treasuryRun(db);
  const first = await source.graph.invoke({ messages: [new HumanMessage(PAYOUT_PROMPT)] }, config);
  expect(pending(first)?.approvals[0]).toMatchObject({ tool: 'transfer', route: 'dual_approval' });
  const run = await exportThread(source.graph, THREAD);
  return { source, run, approvalId: pending(first)!.approvals[0]!.approvalId };
}

type Graph = Parameters<typeof resumeThread>[0];
/** `approver` signs the pending approval `approvalId` (with their test key) and resumes. */
async function approve(graph: Graph, approvalId: string, approver: string) {
  type Result = { messages: ToolMessage[] };
  // An imported run is due to run its node, not yet suspended in it: let it raise its interrupt.
  if ((await pendingApprovalInterrupts(graph, THREAD)).length === 0) {
    const state = await (
      graph as unknown as { getState(c: object): Promise<{ next: string[]; values: Result }> }
    ).getState(config);
    if (state.next.length === 0) return state.values;
    const continued = (await resumeThread(graph, THREAD)) as Result;
    if ((await pendingApprovalInterrupts(graph, THREAD)).length === 0) return continued;
  }
  const [waiting] = await pendingApprovalInterrupts(graph, THREAD);
  const request = waiting!.value.approvals.find((a) => a.approvalId === approvalId)!;
  return resumeThread(graph, THREAD, signAs(request, approver)) as Promise<Result>;
}

describeEachDatabase('a suspended treasury run moved to a fresh PGlite', ({ db }) => {
  it('resumes there after alice and bob approve, and pays exactly once', async () => {
    const { source, run, approvalId } = await suspendedPayout(db());
    expect(run.pending).toMatchObject({ next: ['tools'], resumeAs: 'model' });
    expect(run.pending.approvals.map((a) => a.id)).toEqual([approvalId]);
    const file = JSON.parse(canonicalJson(run));

    const target = await treasuryRun(await freshPglite());
    const imported = await importThread(target.graph, file);
    expect(imported.approvals).toEqual([{ approvalId, status: 'restored', replayedDecisions: 0 }]);
    expect(imported.auditEvents).toBe(run.audit!.eventCount);
    // The move keeps the deadline: a request waits no longer for having moved.
    const request = await target.approvals.require(approvalId);
    expect(request.expiresAt).toBe(run.pending.approvals[0]!.expiresAt);

    expect(pending(await approve(target.graph, approvalId, 'alice@company.com'))).toBeDefined();
    expect(await target.executions()).toBe(0);
    const done = await approve(target.graph, approvalId, 'bob@company.com');
    expect(pending(done)).toBeUndefined();
    expect(done.messages.at(-1)?.content).toBe('Paid Acme Suppliers $50,000.');
    const paid = done.messages.find(
      (m: ToolMessage) => m.getType() === 'tool' && m.name === 'transfer',
    ) as ToolMessage;
    expect(JSON.parse(String(paid.content))).toMatchObject({ status: 'executed' });
    expect(await target.executions()).toBe(1);
    expect(await source.executions()).toBe(0);

    // The target's chain continues the source's: same first events, one valid chain, sealed.
    const events = await target.audit.events(THREAD);
    expect(events.slice(0, run.audit!.eventCount)).toEqual(run.audit!.events);
    expect((await target.audit.verify(THREAD)).valid).toBe(true);
    const { bundle } = await target.kit.sealEvidence(THREAD);
    const approvers = trustedApprovers(['alice@company.com', 'bob@company.com']);
    expect(
      verifyEvidence(JSON.parse(JSON.stringify(bundle)), { keys: [signer], approvers }).valid,
    ).toBe(true);
  });

  it('exports an imported run byte for byte as it was exported', async () => {
    const { run } = await suspendedPayout(db());
    const target = await treasuryRun(await freshPglite());
    await importThread(target.graph, JSON.parse(canonicalJson(run)));
    expect(canonicalJson(await exportThread(target.graph, THREAD))).toBe(canonicalJson(run));
  });

  it('cannot lower the approvals a transfer needs by editing the file', async () => {
    const { run, approvalId } = await suspendedPayout(db());
    const forged = structuredClone(run) as PortableRun;
    const approval = forged.pending.approvals[0]!;
    approval.route = 'human_required';
    approval.tiers = [{ name: 'single', approvers: '*', requiredApprovals: 1, timeoutMs: 1e9 }];
    approval.proposer = 'nobody';
    const target = await treasuryRun(await freshPglite());
    const imported = await importThread(target.graph, forged, { agentId: 'payout-bot' });
    expect(imported.approvals[0]?.status).toBe('replaced');
    const request = await target.approvals.require(approvalId);
    expect(request).toMatchObject({ route: 'dual_approval', proposer: 'payout-bot' });
    const security = (await target.audit.events(THREAD)).filter((e) => e.type === 'security_event');
    expect(security.map((e) => e.payload.kind)).toEqual(['imported_approval_replaced']);
    // One approval is not enough, and the bot cannot approve its own proposal.
    await approve(target.graph, approvalId, 'payout-bot');
    const afterOne = await approve(target.graph, approvalId, 'alice@company.com');
    expect(pending(afterOne)).toBeDefined();
    expect(await target.executions()).toBe(0);
  });

  it('drops decisions recorded in the file unless told to trust them, and then checks them', async () => {
    const { run, approvalId } = await suspendedPayout(db());
    const forged = structuredClone(run) as PortableRun;
    // Decisions typed into the file: bare names, no signatures.
    forged.pending.approvals[0]!.decisions = [
      'payout-bot',
      'alice@company.com',
      'bob@company.com',
    ].map((approver, index) => ({
      decisionId: `forged-${index}`,
      approver,
      decision: 'approve' as const,
      tier: 0,
      decidedAt: '2026-01-01T00:00:00.000Z',
      verified: false,
    }));
    const cautious = await treasuryRun(await freshPglite());
    await importThread(cautious.graph, forged);
    expect((await cautious.approvals.require(approvalId)).decisions).toEqual([]);
    expect(pending(await resumeThread(cautious.graph, THREAD))).toBeDefined();
    expect(await cautious.executions()).toBe(0);

    // Trusting the file does not make a bare name a decision: every one is refused.
    const trusting = await treasuryRun(await freshPglite());
    const imported = await importThread(trusting.graph, forged, { trustRecordedDecisions: true });
    expect(imported.approvals).toEqual([
      { approvalId, status: 'restored', replayedDecisions: 0, refusedDecisions: 3 },
    ]);
    const kinds = (await trusting.audit.events(THREAD))
      .filter((e) => e.type === 'security_event')
      .map((e) => e.payload.kind);
    expect(kinds).toEqual(['decision_unsigned', 'decision_unsigned', 'decision_unsigned']);
    expect(pending(await resumeThread(trusting.graph, THREAD))).toBeDefined();
    expect(await trusting.executions()).toBe(0);
  });

  it('replays a signed decision recorded in the file, verified by the target', async () => {
    const source = await treasuryRun(db());
    const first = await source.graph.invoke(
      { messages: [new HumanMessage(PAYOUT_PROMPT)] },
      config,
    );
    const request = pending(first)!.approvals[0]!;
    const approvalId = request.approvalId;
    // alice signs on the source (out of band); the run moves before anyone else decides.
    await source.approvals.decide(approvalId, signAs(request, 'alice@company.com'));
    const run = await exportThread(source.graph, THREAD);
    expect(run.pending.approvals[0]?.decisions.map((d) => d.verified)).toEqual([true]);

    const target = await treasuryRun(await freshPglite());
    const imported = await importThread(target.graph, JSON.parse(canonicalJson(run)), {
      trustRecordedDecisions: true,
    });
    expect(imported.approvals).toEqual([{ approvalId, status: 'restored', replayedDecisions: 1 }]);
    await approve(target.graph, approvalId, 'bob@company.com');
    expect(await target.executions()).toBe(1);
  });

  it('moves a run suspended again after one of two approvals, and pays once after the second', async () => {
    const source = await treasuryRun(db());
    const first = await source.graph.invoke(
      { messages: [new HumanMessage(PAYOUT_PROMPT)] },
      config,
    );
    const approvalId = pending(first)!.approvals[0]!.approvalId;
    await approve(source.graph, approvalId, 'alice@company.com');
    const run = await exportThread(source.graph, THREAD);
    expect(run.pending.next).toEqual(['tools']);
    const target = await treasuryRun(await freshPglite());
    await importThread(target.graph, JSON.parse(canonicalJson(run)), {
      trustRecordedDecisions: true,
    });
    await approve(target.graph, approvalId, 'bob@company.com');
    expect(await target.executions()).toBe(1);
    expect(await source.executions()).toBe(0);
  });

  it('refuses a file whose approval was edited to cover other arguments, writing nothing', async () => {
    const { run } = await suspendedPayout(db());
    const forged = structuredClone(run) as PortableRun;
    (forged.pending.approvals[0]!.proposal.arguments as Record<string, unknown>).amount =
      '500000.00';
    const target = await treasuryRun(await freshPglite());
    const error = await importThread(target.graph, forged).catch((caught: unknown) => caught);
    expect(VeridexError.is(error, 'import_invalid')).toBe(true);
    expect((error as Error).message).toContain('proposalHash does not match');
    expect(await target.audit.events(THREAD)).toEqual([]);
    expect((await target.graph.getState(config)).next).toEqual([]);
  });

  it('never pays an amount edited into the history after the approval was requested', async () => {
    const { run, approvalId } = await suspendedPayout(db());
    const forged = structuredClone(run) as PortableRun;
    const call = forged.messages.flatMap((m) =>
      m.role === 'assistant' ? (m.toolCalls ?? []) : [],
    );
    call.find((c) => c.name === 'transfer')!.arguments.amount = '200000.00';
    const target = await treasuryRun(await freshPglite());
    await importThread(target.graph, forged);
    await approve(target.graph, approvalId, 'alice@company.com');
    const done = await approve(target.graph, approvalId, 'bob@company.com');
    const answer = done.messages.find(
      (m: ToolMessage) => m.getType() === 'tool' && m.name === 'transfer',
    ) as ToolMessage | undefined;
    expect(String(answer?.content ?? '')).not.toContain('"executed"');
    expect(await target.executions()).toBe(0);
    const kinds = (await target.audit.events(THREAD))
      .filter((e) => e.type === 'security_event')
      .map((e) => e.payload.kind);
    expect(kinds).toContain('proposal_mutation_detected');
  });

  it('refuses to import over a thread that exists in the target', async () => {
    const { run } = await suspendedPayout(db());
    const target = await treasuryRun(await freshPglite());
    await importThread(target.graph, run);
    const error = await importThread(target.graph, run).catch((caught: unknown) => caught);
    expect(VeridexError.is(error, 'import_conflict')).toBe(true);
  });
});
