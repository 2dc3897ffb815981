// A proposal and a policy verdict to hand an ApprovalManager, for tests of approvals that
// never execute the tool.
import { ApprovalManager, type ApprovalManagerOptions } from '../../src/approvals/index.js';
import { AuditLog, PostgresAuditStore } from '../../src/audit/index.js';
import type { Database } from '../../src/db/index.js';
import { buildToolProposal, type PolicyDecision } from '../../src/policy/index.js';
import type { AnyGovernedTool } from '../../src/tools/index.js';

// Only the fields a proposal reads; the approvals module never executes the tool.
const transferTool = {
  name: 'transfer',
  schemaHash: 'a'.repeat(64),
  safetyClass: 'financial',
  trust: 'local',
} as unknown as AnyGovernedTool;

/** A $50,000 transfer proposal on `threadId`. */
export function transferProposal(threadId: string, toolCallId = 'call_1', memo = 'INV-1234') {
  return buildToolProposal({
    tool: transferTool,
    arguments: { to: 'acme-suppliers', amount: '50000.00', currency: 'USD', memo },
    threadId,
    runId: threadId,
    toolCallId,
    proposer: 'payout-bot',
  });
}

/** The policy verdict that escalates to `route`. */
export function escalate(
  route: 'human_required' | 'dual_approval',
): Extract<PolicyDecision, { verdict: 'escalate' }> {
  return {
    verdict: 'escalate',
    route,
    reason: 'transfers over $10,000 need two approvers',
    ruleId: 'treasury.dual_approval',
    ruleName: 'Dual approval threshold',
    evaluations: [],
  } as unknown as Extract<PolicyDecision, { verdict: 'escalate' }>;
}

/** An ApprovalManager over `db` with the audit log in the same database (both are required). */
export function approvalsIn(
  db: Database,
  options: Omit<ApprovalManagerOptions, 'db' | 'audit'> = {},
): ApprovalManager {
  return new ApprovalManager({
    db,
    audit: new AuditLog({ store: new PostgresAuditStore(db) }),
    ...options,
  });
}
