import { HumanMessage } from '@langchain/core/messages';
import { Command } from '@langchain/langgraph';
import { expect } from 'vitest';
import type { AuditLog, TraceEvent } from '../../src/audit/index.js';
import type { ApprovalsInterrupt } from '../../src/nodes/index.js';
import { buildGovernedGraph } from '../nodes/governed-graph.js';
import { signAs } from './approvers.js';

/** The $50,000 transfer the evidence tests pay: dual approval, call id `call_pay`. */
const pay = {
  name: 'transfer',
  args: { to: 'acme', amount: '50000.00', currency: 'USD' },
  id: 'call_pay',
};

/**
 * An honest run in memory: the transfer escalates, alice and bob approve it with signed
 * decisions through resumes, and it is paid once. Returns the thread's audit events, the
 * material an insider re-chains and re-seals in the evidence tests.
 */
export async function paidThread(
  threadId: string,
): Promise<{ events: TraceEvent[]; threadId: string }> {
  const config = { configurable: { thread_id: threadId } };
  const { graph, ledger, audit } = buildGovernedGraph([{ toolCalls: [pay] }, 'paid']);
  const first = await graph.invoke({ messages: [new HumanMessage('pay')] }, config);
  const pending = (first as unknown as { __interrupt__: Array<{ value: ApprovalsInterrupt }> })
    .__interrupt__[0]!.value.approvals[0]!;
  await graph.invoke(new Command({ resume: signAs(pending, 'alice') }), config);
  await graph.invoke(new Command({ resume: signAs(pending, 'bob') }), config);
  expect(ledger.transfers).toHaveLength(1);
  return { events: await (audit as AuditLog).events(threadId), threadId };
}
