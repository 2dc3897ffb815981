// Adversary: an operator's typo in the createAgent middleware's configuration (THREAT-MODEL
// "Fail closed: configuration naming something absent is an error"). `safetyClasses` and
// `review` keys naming no tool are `config_invalid`; these neighbouring settings are not:
// - `rules.requireApproval` naming no tool (the counterpart of `interruptOn`, README "Which
//   tools ask"): the tool it meant runs with no approval at all;
// - a misspelt field of a `review` entry (`allowedDecision`): every decision is allowed;
// - a `review` key that only looks like the tool's name (Cyrillic `е`), in a process that
//   resumes a thread with a plain `invoke` before any model call: `safetyClasses` refuses the
//   same look-alike there, `review` lets the decision it should refuse through;
// (A `review` entry's `argsSchema` is display only, as the README states: an edit is checked by
// the tool's own input schema, decided again by the policy and approved by someone other than
// its editor.)
import { Command } from '@langchain/langgraph';
import { describe, expect, it } from 'vitest';
import { PolicyEngine, rules } from '../../src/policy/index.js';
import type { ScriptedTurn } from '../../src/testing/index.js';
import { signAs } from '../support/approvers.js';
import {
  buildHitlAgent,
  interruptsOf,
  newThread,
  sharedState,
  user,
} from '../support/hitl-agent.js';

const email = { id: 'e1', name: 'send_email', args: { to: 'ceo@example.com', body: 'hi' } };
const refund = { id: 'r1', name: 'refund', args: { order: 'A-1', amount: '50.00' } };

describe('operator typos in the middleware configuration', () => {
  it('rules.requireApproval naming no tool is config_invalid, not a tool that runs unapproved', async () => {
    const shared = sharedState();
    const { agent, ran, model } = buildHitlAgent(
      [{ toolCalls: [email] }, 'ok'],
      {
        policy: new PolicyEngine({
          audit: shared.audit,
          rules: [rules.requireApproval({ tools: ['send_emial'] })],
        }),
      },
      shared,
    );
    const outcome = await agent.invoke(user('mail the ceo'), newThread()).catch((e: unknown) => e);
    expect(ran.emails, 'the email meant to need approval was sent').toEqual([]);
    expect((outcome as { cause?: unknown }).cause ?? outcome).toMatchObject({
      code: 'config_invalid',
      message: expect.stringContaining('send_emial'),
    });
    expect(model.calls).toHaveLength(0);
  });

  it('a review entry with a misspelt field is config_invalid, not every decision allowed', () => {
    // Refused when the middleware is built, before any agent exists.
    expect(() =>
      buildHitlAgent([{ toolCalls: [refund] }, 'ok'], {
        review: { refund: { allowedDecision: ['approve', 'reject'] } as never },
      }),
    ).toThrow(
      expect.objectContaining({
        code: 'config_invalid',
        message: expect.stringContaining('allowedDecision'),
      }),
    );
  });

  it('a review key that only looks like the tool is refused in a process resumed by plain invoke', async () => {
    const shared = sharedState();
    const turns: ScriptedTurn[] = [{ toolCalls: [refund] }, 'ok'];
    const config = newThread();
    const first = buildHitlAgent(turns, {}, shared);
    await first.agent.invoke(user('refund'), config);
    // A deploy adds review settings for refund, with a Cyrillic е in the key.
    const second = buildHitlAgent(
      turns,
      { review: { 'r\u0435fund': { allowedDecisions: ['approve', 'reject'] } } },
      shared,
    );
    const waiting = await second.agent
      .invoke(new Command({ resume: { type: 'veridex.recheck' } }), config)
      .catch((e: unknown) => e);
    if (!('messages' in (waiting as object))) {
      expect((waiting as { cause?: unknown }).cause ?? waiting).toMatchObject({
        code: 'config_invalid',
      });
      return;
    }
    const approval = interruptsOf(waiting as never)[0]!.approvals[0]!;
    const edited = { order: 'A-1', amount: '5000.00' };
    const after = await second.agent
      .invoke(
        new Command({ resume: [signAs(approval, 'alice', 'edit', { editedArgs: edited })] }),
        config,
      )
      .catch((e: unknown) => e);
    if (!('messages' in (after as object))) {
      expect((after as { cause?: unknown }).cause ?? after).toMatchObject({
        code: 'config_invalid',
      });
      return;
    }
    // The edit the operator meant to forbid became a new revision of the call.
    expect((await shared.approvals.require(approval.approvalId)).status).toBe('pending');
  });
});
