// Adversary: the model, which chooses tool-call ids. Two calls of one turn under the same id
// share one approval id (thread, call id, revision): the first opens the request, the second
// finds it with another proposal hash. Nothing runs unapproved (the second call is refused,
// see the controls in hitl-gate-holds-against-model-ids-names-and-decision-games.test.ts), but
// the reviewers are shown only the first call, and the record says something that did not
// happen: a `security_event` `proposal_mutation_detected` — "the arguments changed after
// approval … was requested" — which tells an auditor that someone tampered with an approved
// proposal, when the model merely sent a second call under a used id.
import { Command } from '@langchain/langgraph';
import { describe, expect, it } from 'vitest';
import { signAs } from '../support/approvers.js';
import {
  buildHitlAgent,
  interruptsOf,
  newThread,
  securityEvents,
  toolMessages,
  user,
} from '../support/hitl-agent.js';

describe('two calls of one model turn under one tool-call id', () => {
  it('are not recorded as a mutation of an approved proposal', async () => {
    const { agent, ran, audit } = buildHitlAgent([
      {
        toolCalls: [
          { id: 'dup', name: 'refund', args: { order: 'A-1', amount: '5.00' } },
          { id: 'dup', name: 'refund', args: { order: 'A-2', amount: '5000.00' } },
        ],
      },
      'ok',
    ]);
    const config = newThread();
    const value = interruptsOf(await agent.invoke(user('refund'), config))[0]!;
    const done = await agent.invoke(
      new Command({ resume: value.approvals.map((approval) => signAs(approval, 'alice')) }),
      config,
    );
    expect(ran.refunds.map((refund) => refund.order)).not.toContain('A-2');
    const answers = toolMessages(done).map((message) => String(message.content));
    const events = await securityEvents(audit, config.configurable.thread_id);
    expect(
      events.map((event) => event.kind),
      'a duplicate call id logged as tampering with an approved proposal',
    ).not.toContain('proposal_mutation_detected');
    expect(answers.join('\n')).not.toMatch(/changed after approval/);
  });
});
