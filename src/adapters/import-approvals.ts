import { ApprovalManager, type ApprovalRequest } from '../approvals/index.js';
import { type AuditLog, type AuditSink, canonicalJson, deriveEventId } from '../audit/index.js';
import { VeridexError } from '../errors/index.js';
import {
  buildToolProposal,
  type PolicyEngine,
  type ToolProposal,
  type ToolProposalEnvelope,
} from '../policy/index.js';
import type { AnyGovernedTool, ToolRegistry } from '../tools/index.js';
import type { PortableApproval } from './portable-run.js';

/** What became of one pending approval of an imported run. */
export interface ImportedApproval {
  approvalId: string;
  /**
   * - `restored`: the target's policy asks for the same approvals; the request waits until the
   *   earlier of the two deadlines;
   * - `replaced`: the target's policy asks for something else (another route, other approvers);
   *   the request waits as the target's policy made it, and a `security_event` says so;
   * - `not_required`: the target's policy does not escalate the call; it decides on resume.
   */
  status: 'restored' | 'replaced' | 'not_required';
  /** Decisions replayed from the file (only with `trustRecordedDecisions`). */
  replayedDecisions: number;
  /** Recorded decisions the target's rules refused (each also a `security_event`). */
  refusedDecisions?: number;
}

/** A pending approval checked against the target's tools: ready to be re-derived. */
export interface CheckedApproval {
  request: PortableApproval;
  proposal: ToolProposal;
  tool: AnyGovernedTool;
  revision: number;
}

const MAX_REVISION = 64;
const DISCARD: AuditSink = { append: async () => undefined };

/**
 * Checks an imported approval request against itself and the target's tools before anything
 * is written: a tool proposal of this thread, for a tool the target has, whose envelope hashes
 * to its `proposalHash` under the target tool's contract, and whose id is the one the
 * `ApprovalManager` derives for that tool call. The proposer is `agentId` (the target graph's
 * agent) when known; otherwise the file's claim is kept.
 *
 * @throws VeridexError `import_invalid` naming the approval and what does not match.
 */
export function checkApproval(
  request: PortableApproval,
  threadId: string,
  registry: ToolRegistry,
  agentId?: string,
): CheckedApproval {
  const invalid = (why: string): never => {
    throw new VeridexError('import_invalid', `Approval ${request.id}: ${why}.`, {
      details: { approvalId: request.id },
    });
  };
  const envelope = request.proposal as unknown as ToolProposalEnvelope;
  if (envelope.kind !== 'tool') invalid(`a ${String(envelope.kind)} proposal cannot be imported`);
  if (request.threadId !== threadId || envelope.threadId !== threadId) {
    invalid(`it belongs to another thread than "${threadId}"`);
  }
  if (typeof envelope.arguments !== 'object' || envelope.arguments === null) {
    invalid('its proposal has no arguments object');
  }
  const tool = registry.get(envelope.toolName);
  if (!tool) invalid(`the target graph has no tool "${envelope.toolName}"`);
  const proposal = buildToolProposal({
    tool: tool!,
    arguments: envelope.arguments,
    threadId,
    runId: request.runId,
    toolCallId: envelope.toolCallId,
    proposer: agentId ?? request.proposer,
  });
  if (proposal.hash !== request.proposalHash) {
    invalid(
      tool!.schemaHash !== envelope.schemaHash
        ? `it was requested for another contract of "${envelope.toolName}" (schema hash ${envelope.schemaHash}, the target has ${tool!.schemaHash})`
        : 'its proposalHash does not match its proposal (the file was edited)',
    );
  }
  let revision = 0;
  while (
    revision <= MAX_REVISION &&
    ApprovalManager.approvalId(threadId, envelope.toolCallId, revision) !== request.id
  ) {
    revision++;
  }
  if (revision > MAX_REVISION || request.subjectId !== envelope.toolCallId) {
    invalid('its id is not the one derived from its thread and tool call');
  }
  return { request, proposal, tool: tool!, revision };
}

/** Where re-derived approvals go, and what re-derives them. */
export interface ApprovalTarget {
  approvals: ApprovalManager;
  policy: PolicyEngine;
  audit?: AuditLog;
  /** Replay the decisions recorded in the file through `ApprovalManager.decide`. */
  trustRecordedDecisions?: boolean;
}

/**
 * Re-derives one pending approval in the target: the target's policy evaluates the proposal
 * and the target's `ApprovalManager` opens the request — so a file can never lower a route, a
 * quorum or an approver list. Only the deadline is taken from the file, and only when the
 * target asks for exactly the same approvals: the earlier of the two (a move never extends a
 * deadline). Recorded decisions are dropped unless
 * `trustRecordedDecisions`, and then they go through `decide` like fresh ones (proposer and
 * approver rules of the target apply).
 */
export async function rederiveApproval(
  checked: CheckedApproval,
  target: ApprovalTarget,
): Promise<ImportedApproval> {
  const { request, proposal, tool, revision } = checked;
  const decision = await target.policy.evaluate(proposal, { audit: DISCARD });
  if (decision.verdict !== 'escalate') {
    return { approvalId: request.id, status: 'not_required', replayedDecisions: 0 };
  }
  const signedTimes = request.decisions
    .map((recorded) => recorded.signed?.statement.decidedAt)
    .filter((time): time is string => typeof time === 'string')
    .map((time) => Date.parse(time));
  const created = await target.approvals.request(proposal, decision, {
    revision,
    summary: { toolName: tool.name, safetyClass: tool.safetyClass, arguments: proposal.arguments },
    // Recorded signed decisions must not look older than the request they are replayed onto.
    ...(target.trustRecordedDecisions && signedTimes.length > 0
      ? { openedAt: new Date(Math.min(...signedTimes)) }
      : {}),
  });
  const same = requirementsOf(created) === requirementsOf(request);
  if (same && created.status === 'pending' && created.decisions.length === 0) {
    await target.approvals.store.update(created.id, (current) => ({
      next: {
        ...current,
        expiresAt: request.expiresAt < current.expiresAt ? request.expiresAt : current.expiresAt,
      },
      result: undefined,
    }));
  } else if (!same) {
    await target.audit?.append({
      threadId: request.threadId,
      runId: request.runId,
      eventId: deriveEventId(
        request.threadId,
        'security_event',
        'imported_approval_replaced',
        request.id,
      ),
      type: 'security_event',
      payload: {
        kind: 'imported_approval_replaced',
        approvalId: request.id,
        toolName: tool.name,
        file: JSON.parse(requirementsOf(request)),
        target: JSON.parse(requirementsOf(created)),
      },
    });
  }
  let replayedDecisions = 0;
  let refusedDecisions = 0;
  if (target.trustRecordedDecisions) {
    for (const recorded of request.decisions) {
      try {
        // A signed decision is replayed as the approver signed it — the target verifies it
        // against its own approver directory; a bare one counts only in the unverified mode.
        await target.approvals.decide(
          created.id,
          recorded.signed
            ? {
                statement: recorded.signed.statement,
                keyId: recorded.signed.keyId,
                signature: recorded.signed.signature,
                ...(recorded.reason !== undefined ? { reason: recorded.reason } : {}),
                ...(recorded.editedArgs !== undefined ? { editedArgs: recorded.editedArgs } : {}),
              }
            : {
                decision: recorded.decision,
                approver: recorded.approver,
                decisionId: recorded.decisionId,
                ...(recorded.reason !== undefined ? { reason: recorded.reason } : {}),
                ...(recorded.editedArgs !== undefined ? { editedArgs: recorded.editedArgs } : {}),
              },
        );
        replayedDecisions++;
      } catch (error) {
        // A decision the target's rules refuse (the proposer, an approver not allowed, a
        // duplicate) is refused as a live one would be: recorded, and not counted.
        if (!VeridexError.is(error) || error.code === 'db_unavailable') throw error;
        refusedDecisions++;
      }
    }
  }
  return {
    approvalId: request.id,
    status: same ? 'restored' : 'replaced',
    replayedDecisions,
    ...(refusedDecisions > 0 ? { refusedDecisions } : {}),
  };
}

// Everything that decides who must approve: compared between the file and the target.
function requirementsOf(request: Omit<ApprovalRequest, 'createdAt'>): string {
  return canonicalJson({
    route: request.route,
    ruleId: request.ruleId,
    proposer: request.proposer,
    tiers: request.tiers.map((tier) => ({
      name: tier.name,
      approvers: tier.approvers,
      requiredApprovals: tier.requiredApprovals ?? 1,
      timeoutMs: tier.timeoutMs,
    })),
    tierIndex: request.tierIndex,
  });
}
