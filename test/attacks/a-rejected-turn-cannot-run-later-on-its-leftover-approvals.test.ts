// Adversary: the model (or whoever injected it), which chooses its tool-call ids. With
// `onRejection: 'return_to_model'` a rejection ends the turn: no call of it runs, each is
// answered (`turn_rejected` for the others) and the model goes again (README "A rejection").
// But the approvals the turn's OTHER calls received stay `approved`, and what keeps them from
// being used later is only the message history: the gate and the agent skip a call whose id
// a ToolMessage already answers. Once that history is gone — `summarizationMiddleware`
// replaces old messages with a summary — the model proposes the same call again under the
// same id, the gate finds its approval (same thread, call id and arguments: same approval id
// and proposal hash), proves it, and the call runs with no one asked, although the approvers
// ended the turn it belonged to.
import type { ToolMessage } from '@langchain/core/messages';
import { Command } from '@langchain/langgraph';
import { summarizationMiddleware } from 'langchain';
import { describe, expect, it } from 'vitest';
import { type ScriptedTurn, scriptedModel } from '../../src/testing/index.js';
import { signAs } from '../support/approvers.js';
import { buildHitlAgent, interruptsOf, newThread, user } from '../support/hitl-agent.js';

const REFUND = { id: 'pay-1', name: 'refund', args: { order: 'A-1', amount: '900.00' } };
const EMAIL = { id: 'mail-1', name: 'send_email', args: { to: 'bob@example.com', body: 'hi' } };

describe("onRejection 'return_to_model': a turn the approvers ended", () => {
  it('does not run later, under its old call id, on the approval one of its calls received', async () => {
    const summarised = (messages: Parameters<Extract<ScriptedTurn, Function>>[0]) =>
      messages.some((message) => String(message.content).includes('SUMMARY'));
    const model: ScriptedTurn = (messages) => {
      const answers = messages.filter((message) => message.getType() === 'tool') as ToolMessage[];
      if (!summarised(messages) && !messages.some((message) => message.getType() === 'ai')) {
        return { toolCalls: [REFUND, EMAIL] };
      }
      if (answers.some((answer) => String(answer.content).includes('refunded'))) return 'done';
      // The turn's answers are gone from the history: propose the refund again, same id.
      if (summarised(messages) && !answers.some((answer) => answer.tool_call_id === REFUND.id)) {
        return { toolCalls: [REFUND] };
      }
      return { toolCalls: [{ id: `s${answers.length}`, name: 'search', args: { q: 'A-1' } }] };
    };
    const { agent, ran } = buildHitlAgent([model], { onRejection: 'return_to_model' }, undefined, [
      summarizationMiddleware({
        model: scriptedModel(['SUMMARY OF EARLIER TURNS'], { whenExhausted: 'repeat-last' }),
        trigger: { messages: 6 },
        keep: { messages: 2 },
      }),
    ]);
    const config = newThread();
    const [refund, email] = interruptsOf(
      await agent.invoke(user('refund A-1, tell bob'), config),
    )[0]!.approvals;
    // Alice approves the refund; Bob rejects the email: the turn ends, nothing of it runs.
    // This script re-proposes the refund whenever its answer is gone, so a defended run ends at
    // LangGraph's recursion limit; only a run that pays ends on its own.
    const after = await agent
      .invoke(
        new Command({ resume: [signAs(refund!, 'alice'), signAs(email!, 'bob', 'reject')] }),
        { ...config, recursionLimit: 60 },
      )
      .catch((error: unknown) => {
        if ((error as Error).name !== 'GraphRecursionError') throw error;
        return { messages: [] };
      });
    const asked = interruptsOf(after as never).flatMap((value) => value.actionRequests);
    expect(
      ran.refunds,
      `the refund of the rejected turn ran later with ${asked.length} approval request(s) raised`,
    ).toEqual([]);
  });
});
