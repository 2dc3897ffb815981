import { requiredApprovals } from '../approvals/index.js';
import { isSignedDecision } from '../identity/index.js';
import type { PendingPlan } from './call-planner.js';

/**
 * One action awaiting review, in the shape of LangChain's `humanInTheLoopMiddleware`
 * (`name`, `args`, `description`), extended with what our approvals add: the request's id,
 * route, quorum, expiry and the hash of the proposal a signature must name.
 */
export interface HitlActionRequest {
  name: string;
  args: Record<string, unknown>;
  description: string;
  approvalId: string;
  toolCallId: string;
  route: string;
  /** Approvals needed at the current tier, and approvals counted so far. */
  quorum: { required: number; approved: number };
  expiresAt: string;
  proposalHash: string;
}

/** LangChain's review config for one action: which decisions a reviewer may take. */
export interface HitlReviewConfig {
  actionName: string;
  allowedDecisions: Array<'approve' | 'edit' | 'reject'>;
  /** JSON Schema of the arguments, for editing. */
  argsSchema?: Record<string, unknown>;
}

/** The `actionRequests` and `reviewConfigs` of an approvals interrupt. */
export interface HitlRequest {
  actionRequests: HitlActionRequest[];
  reviewConfigs: HitlReviewConfig[];
}

/** The HITL view of the pending approvals, in the order of the interrupt's `approvals`. */
export function hitlRequestOf(pending: readonly PendingPlan[]): HitlRequest {
  return {
    actionRequests: pending.map(({ request, tool, proposal }) => {
      const required = requiredApprovals(request);
      const approved = request.decisions.filter(
        (d) => d.decision === 'approve' && d.tier === request.tierIndex,
      ).length;
      return {
        name: tool.name,
        args: proposal.arguments,
        description: `${tool.name} needs ${request.route.replace('_', ' ')} (${approved} of ${required}): ${request.reason}`,
        approvalId: request.id,
        toolCallId: proposal.toolCallId,
        route: request.route,
        quorum: { required, approved },
        expiresAt: request.expiresAt,
        proposalHash: request.proposalHash,
      };
    }),
    reviewConfigs: pending.map(({ tool }) => ({
      actionName: tool.name,
      allowedDecisions: ['approve', 'edit', 'reject'],
      argsSchema: tool.jsonSchema.input,
    })),
  };
}

/** True for LangChain's resume form `{ decisions: [...] }`. */
export function isHitlResponse(value: unknown): value is { decisions: unknown[] } {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    !isSignedDecision(value) &&
    Array.isArray((value as { decisions?: unknown }).decisions)
  );
}

/**
 * LangChain's `{ decisions: [{ type, message?, editedAction? }, ...] }` — one decision per
 * action request, in order — as our resume entries. A decision counts only as what it
 * carries: one with a signed decision spread in (`{ type: 'approve', ...signDecision(...) }`)
 * is that signed decision (its `type` must agree with what was signed); a bare one becomes an
 * unsigned decision for the action's approval, which the approval manager refuses
 * (`decision_unsigned`) unless it runs in the `unverified` development mode, where it needs an
 * `approver`. Bare decisions are matched by position, so a list whose length differs from the
 * pending approvals is refused whole (a stale client must not approve the wrong call); signed
 * ones name their approval themselves.
 */
export function fromHitlResponse(
  value: { decisions: unknown[] },
  pending: readonly PendingPlan[],
): unknown[] {
  const aligned = value.decisions.length === pending.length;
  return value.decisions.map((decision, index) => {
    if (typeof decision !== 'object' || decision === null) return invalid('not an object');
    const { type, message, editedAction, ...rest } = decision as {
      type?: unknown;
      message?: unknown;
      editedAction?: { name?: unknown; args?: unknown };
    } & Record<string, unknown>;
    if (isSignedDecision(rest)) {
      if (type !== undefined && type !== rest.statement.decision) {
        return invalid(`type "${String(type)}" does not match the signed decision`);
      }
      return rest;
    }
    const plan = pending[index];
    if (!aligned || !plan) {
      return invalid(`${value.decisions.length} decisions for ${pending.length} pending approvals`);
    }
    if (editedAction !== undefined && editedAction.name !== plan.tool.name) {
      return invalid('an edit cannot change which tool is called');
    }
    return {
      approvalId: plan.request.id,
      decision: type,
      approver: rest.approver,
      ...(typeof message === 'string' ? { reason: message } : {}),
      ...(type === 'edit' ? { editedArgs: editedAction?.args } : {}),
    };
  });
}

// An entry naming no approval: applyResume refuses it as `resume_payload_invalid`.
function invalid(why: string): { invalidDecision: string } {
  return { invalidDecision: why };
}
