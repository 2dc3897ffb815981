import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AIMessage } from '@langchain/core/messages';
import { MemorySaver } from '@langchain/langgraph';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Ed25519Signer, generateKeyPair, verifyEvidence } from '../../src/audit/index.js';
import { VeridexError } from '../../src/errors/index.js';
import {
  BudgetExhaustedError,
  createGovernedAgent,
  type GovernedAgentOptions,
} from '../../src/nodes/index.js';
import { rules } from '../../src/policy/index.js';
import { type ScriptedTurn, scriptedModel } from '../../src/testing/index.js';
import { tool } from '../../src/tools/index.js';
import { signAs, testApproverInits } from '../support/approvers.js';
import { describeEachDatabase } from '../support/databases.js';
import { type Ledger, testTools } from './governed-graph.js';

const evidenceDir = mkdtempSync(join(tmpdir(), 'veridex-agent-'));
afterAll(() => rmSync(evidenceDir, { recursive: true, force: true }));
const signer = new Ed25519Signer(generateKeyPair().privateKey);

const PAY = { name: 'transfer', args: { to: 'acme', amount: '50000.00', currency: 'USD' } };

describeEachDatabase('createGovernedAgent', ({ db }) => {
  async function agentWith(turns: ScriptedTurn[], extra: Partial<GovernedAgentOptions> = {}) {
    const ledger: Ledger = { balanceReads: 0, transfers: [], rotations: 0 };
    const agent = await createGovernedAgent({
      name: 'payout-bot',
      model: scriptedModel(turns),
      instructions: 'You pay approved invoices.',
      tools: testTools(ledger),
      policies: [
        rules.argumentThreshold({
          tools: ['transfer'],
          argument: 'amount',
          atLeast: '10000',
          route: 'dual_approval',
        }),
      ],
      database: db(),
      evidenceSigner: signer,
      evidenceDir,
      ...extra,
    });
    return { agent, ledger };
  }

  it('suspends for dual approval, resumes after decisions made elsewhere, and seals verifiable evidence', async () => {
    const { agent, ledger } = await agentWith([
      { toolCalls: [{ name: 'get_balance', args: { currency: 'USD' } }] },
      { toolCalls: [PAY] },
      'Paid 50,000.00 USD to acme.',
    ]);
    const first = await agent.run('Pay acme 50,000 USD');
    expect(first.status).toBe('suspended');
    expect(first.pendingApprovals).toHaveLength(1);
    expect(first.pendingApprovals[0]).toMatchObject({
      tool: 'transfer',
      route: 'dual_approval',
      requiredApprovals: 2,
    });
    expect(first.tokensUsed).toBeGreaterThan(0);
    const pending = first.pendingApprovals[0]!;
    const approvalId = pending.approvalId;
    // The default ApprovalManager keeps its approver directory in the agent's database.
    for (const init of testApproverInits(['alice', 'bob']))
      await agent.approvals.directory.add(init);

    await agent.approvals.decide(approvalId, signAs(pending, 'alice'));
    const halfway = await agent.resume(first.threadId);
    expect(halfway.status).toBe('suspended');
    expect(halfway.pendingApprovals[0]?.approvals.map((a) => a.approver)).toEqual(['alice']);

    // A bare name does not count, and the RunResult says why.
    const unsigned = await agent.resume(first.threadId, {
      approvalId,
      decision: 'approve',
      approver: 'bob',
    });
    expect(unsigned.status).toBe('suspended');
    expect(unsigned.refusals).toEqual([
      expect.objectContaining({ approvalId, approver: 'bob', code: 'decision_unsigned' }),
    ]);
    expect(ledger.transfers).toHaveLength(0);

    const done = await agent.resume(first.threadId, signAs(pending, 'bob'));
    expect(done.status).toBe('completed');
    expect(done.output).toBe('Paid 50,000.00 USD to acme.');
    expect(ledger.transfers).toHaveLength(1);
    expect(ledger.balanceReads).toBe(1);

    const verification = verifyEvidence(JSON.parse(JSON.stringify(done.evidenceBundle)), {
      keys: [signer.verifier()],
      approvers: await agent.approvals.directory.list(),
    });
    expect(verification.valid).toBe(true);
    // Who approved the payment, verifiable from the bundle alone.
    expect(verification.decisions).toEqual([
      expect.objectContaining({
        approver: 'alice',
        status: 'valid',
        keyTrusted: true,
        toolName: 'transfer',
      }),
      expect.objectContaining({
        approver: 'bob',
        status: 'valid',
        keyTrusted: true,
        toolName: 'transfer',
      }),
    ]);
    const events = verification.body!.events;
    const types = events.map((event) => event.type);
    for (const type of [
      'run_started',
      'turn_started',
      'tool_proposed',
      'policy_decision',
      'approval_requested',
      'approval_decided',
      'approval_resolved',
      'tool_executed',
      'run_suspended',
      'run_completed',
    ]) {
      expect(types, type).toContain(type);
    }
    expect(
      events
        .filter((event) => event.type === 'approval_decided')
        .map((event) => event.payload.approver),
    ).toEqual(['alice', 'bob']);
    expect(done.evidencePath).toMatch(/\.json$/);
  });

  it('ends the run as budget_exhausted when the tool budget runs out', async () => {
    const { agent, ledger } = await agentWith(
      [
        { toolCalls: [{ name: 'get_balance', args: { currency: 'USD' } }] },
        { toolCalls: [{ name: 'get_balance', args: { currency: 'EUR' } }] },
        'never',
      ],
      { budget: { maxToolCalls: 1 } },
    );
    const result = await agent.run('check twice');
    expect(result.status).toBe('budget_exhausted');
    expect(ledger.balanceReads).toBe(1);
    expect((await agent.audit.events(result.threadId)).map((event) => event.type)).toContain(
      'budget_exhausted',
    );
  });

  it('ends the run as budget_exhausted when the token budget runs out', async () => {
    const { agent } = await agentWith(
      [{ toolCalls: [{ name: 'get_balance', args: { currency: 'USD' } }] }, 'never'],
      { budget: { maxTokens: 5 } },
    );
    const result = await agent.run('check the balance please');
    expect(result.status).toBe('budget_exhausted');
    expect(result.output).toBe('');
  });

  it('stops at the wall-clock limit with the last completed step checkpointed', async () => {
    // The limit is reached while the tool runs, whatever the machine's speed: the tool's start
    // is the event that expires it (the timer itself is tested in run-budget.test.ts).
    const limit = new AbortController();
    const slow = tool({
      name: 'slow_report',
      description: 'Takes a while.',
      safetyClass: 'read',
      input: z.object({}),
      output: z.object({ ok: z.boolean() }),
      async execute({ signal }) {
        await new Promise((_resolve, reject) => {
          signal.addEventListener('abort', () => reject(signal.reason));
          limit.abort(new BudgetExhaustedError('wall-clock limit of 300 ms reached'));
        });
        return { ok: true };
      },
    });
    const { agent } = await agentWith(
      [{ toolCalls: [{ name: 'slow_report', args: {} }] }, 'done'],
      {
        tools: [slow],
        // A real wall-clock limit too, far beyond any run here, so both signals are combined.
        budget: { maxWallClockMs: 3_600_000, signal: limit.signal },
      },
    );
    const result = await agent.run('make the report');
    expect(result.status).toBe('budget_exhausted');
    const state = await agent.graph.getState({ configurable: { thread_id: result.threadId } });
    expect(state.next).toEqual(['tools']);
    expect(state.values.messages.at(-1).tool_calls[0].name).toBe('slow_report');
  });

  it('stores the checkpoint that proposes a tool call before the tool runs', async () => {
    // A crash between the two must not lose the proposal: the resumed run would ask the
    // model again, and a different answer would be a second, different action.
    const timeline: string[] = [];
    class SlowSaver extends MemorySaver {
      override async put(...args: Parameters<MemorySaver['put']>) {
        const messages = (args[1].channel_values.messages ?? []) as AIMessage[];
        const proposes = (messages.at(-1)?.tool_calls?.length ?? 0) > 0;
        await new Promise((resolve) => setTimeout(resolve, 25));
        const stored = await super.put(...args);
        if (proposes) timeline.push('proposal stored');
        return stored;
      }
    }
    const lookup = tool({
      name: 'lookup',
      description: 'Looks something up.',
      safetyClass: 'read',
      input: z.object({ key: z.string() }),
      output: z.object({ value: z.string() }),
      async execute() {
        timeline.push('tool ran');
        return { value: 'found' };
      },
    });
    const { agent } = await agentWith(
      [{ toolCalls: [{ name: 'lookup', args: { key: 'a' } }] }, 'Done.'],
      { tools: [lookup], policies: [], checkpointer: new SlowSaver() },
    );
    expect((await agent.run('look it up')).status).toBe('completed');
    expect(timeline).toEqual(['proposal stored', 'tool ran']);
  });

  it('reports an external cancellation as cancelled', async () => {
    const controller = new AbortController();
    controller.abort();
    const { agent } = await agentWith(['hi'], { budget: { signal: controller.signal } });
    const result = await agent.run('hello');
    expect(result.status).toBe('cancelled');
  });

  it('reports a failing model as failed, with a run_failed event', async () => {
    const { agent } = await agentWith([
      () => {
        throw new Error('model provider returned 500');
      },
    ]);
    const result = await agent.run('hello');
    expect(result.status).toBe('failed');
    expect(result.error).toMatchObject({
      code: 'run_failed',
      message: expect.stringContaining('500'),
    });
    expect((await agent.audit.events(result.threadId)).map((event) => event.type)).toContain(
      'run_failed',
    );
  });
});

describe('createGovernedAgent defaults', () => {
  it('asks for a model when there is no API key', async () => {
    const saved = process.env.OPENAI_API_KEY;
    delete process.env.OPENAI_API_KEY;
    try {
      const error = await createGovernedAgent({ name: 'x', instructions: 'y', tools: [] }).catch(
        (caught: unknown) => caught,
      );
      expect(VeridexError.is(error, 'config_invalid')).toBe(true);
      expect((error as Error).message).toContain('scriptedModel');
    } finally {
      if (saved !== undefined) process.env.OPENAI_API_KEY = saved;
    }
  });
});
