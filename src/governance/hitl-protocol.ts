import { requiredApprovals } from '../approvals/index.js';
import { canonicalJson } from '../audit/index.js';
import { isSignedDecision } from '../identity/index.js';
import type { PendingPlan } from './call-planner.js';
import {
  allowedDecisionsFor,
  ownEntry,
  type ReviewConfigs,
  type ReviewDecision,
} from './review-config.js';

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
  allowedDecisions: ReviewDecision[];
  /** JSON Schema of the arguments, for editing. */
  argsSchema?: Record<string, unknown>;
}

/** The `actionRequests` and `reviewConfigs` of an approvals interrupt. */
export interface HitlRequest {
  actionRequests: HitlActionRequest[];
  reviewConfigs: HitlReviewConfig[];
}

/**
 * The HITL view of the pending approvals, in the order of the interrupt's `approvals`: each
 * tool's `review` entry sets its allowed decisions and edit schema, and `descriptions` (from
 * {@link describeActions}) its description.
 */
export function hitlRequestOf(
  pending: readonly PendingPlan[],
  review?: ReviewConfigs,
  descriptions?: readonly (string | undefined)[],
): HitlRequest {
  return {
    actionRequests: pending.map(({ request, tool, proposal }, index) => {
      const { required, approved } = quorumOf(request);
      return {
        name: tool.name,
        args: proposal.arguments,
        description:
          descriptions?.[index] ??
          `${tool.name} needs ${request.route.replace('_', ' ')} (${approved} of ${required}): ${request.reason}`,
        approvalId: request.id,
        toolCallId: proposal.toolCallId,
        route: request.route,
        quorum: { required, approved },
        expiresAt: request.expiresAt,
        proposalHash: request.proposalHash,
      };
    }),
    reviewConfigs: pending.map(({ tool }) => {
      const entry = ownEntry(review, tool.name);
      return {
        actionName: tool.name,
        allowedDecisions: [...allowedDecisionsFor(review, tool.name)],
        argsSchema: entry?.argsSchema ?? tool.jsonSchema.input,
      };
    }),
  };
}

/**
 * The descriptions the tools' `review` entries give the pending calls (undefined where an
 * entry gives none). A factory's result is the operator's own text; one that throws stops
 * the step (a misconfiguration, not the model's doing).
 */
export async function describeActions(
  threadId: string,
  pending: readonly PendingPlan[],
  review: ReviewConfigs | undefined,
): Promise<Array<string | undefined>> {
  return Promise.all(
    pending.map(async ({ call, request, tool }) => {
      const description = ownEntry(review, tool.name)?.description;
      if (typeof description !== 'function') return description;
      const text = await description(call, {
        threadId,
        approvalId: request.id,
        route: request.route,
        reason: request.reason,
        quorum: quorumOf(request),
      });
      return typeof text === 'string' ? text : String(text);
    }),
  );
}

function quorumOf(request: PendingPlan['request']): { required: number; approved: number } {
  return {
    required: requiredApprovals(request),
    approved: request.decisions.filter(
      (d) => d.decision === 'approve' && d.tier === request.tierIndex,
    ).length,
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
  positional = true,
): unknown[] {
  const aligned = value.decisions.length === pending.length;
  return value.decisions.map((decision, index) => {
    if (typeof decision !== 'object' || decision === null) return invalid('not an object');
    const { type, message, editedAction, ...rest } = decision as {
      type?: unknown;
      message?: unknown;
      editedAction?: { name?: unknown; args?: unknown };
    } & Record<string, unknown>;
    if (message !== undefined && typeof message !== 'string') {
      return invalid(`message must be a string, got ${typeof message}`);
    }
    if (isSignedDecision(rest)) {
      if (type !== undefined && type !== rest.statement.decision) {
        return invalid(`type "${String(type)}" does not match the signed decision`);
      }
      if (editedAction !== undefined) {
        // What the client shows as the edit must be what was signed.
        const named = pending.find(
          (plan) => plan.request.id === (rest.statement as { approvalId?: unknown }).approvalId,
        );
        if (named && editedAction.name !== named.tool.name) {
          return invalid('an edit cannot change which tool is called');
        }
        if (canonicalJson(editedAction.args ?? null) !== canonicalJson(rest.editedArgs ?? null)) {
          return invalid('editedAction.args are not the arguments the decision signed');
        }
      }
      return rest;
    }
    if (!positional) {
      if (typeof rest.approvalId !== 'string') {
        return invalid(
          'a bare decision names no approval and this interrupt is one of several a resume reaches: sign it (signDecision) or name its approvalId',
        );
      }
      const named = pending.find((plan) => plan.request.id === rest.approvalId);
      if (editedAction !== undefined && named && editedAction.name !== named.tool.name) {
        return invalid('an edit cannot change which tool is called');
      }
      return bareDecision(rest.approvalId, type, rest.approver, message, editedAction);
    }
    const plan = pending[index];
    if (!aligned || !plan) {
      return invalid(`${value.decisions.length} decisions for ${pending.length} pending approvals`);
    }
    if (rest.approvalId !== undefined && rest.approvalId !== plan.request.id) {
      // A bare entry naming an approval must stand where that approval stands: a reordered
      // list must not move a decision onto another call.
      return invalid(
        `the entry at position ${index} names approval ${String(rest.approvalId).slice(0, 80)}, which is not the approval at that position`,
      );
    }
    if (editedAction !== undefined && editedAction.name !== plan.tool.name) {
      return invalid('an edit cannot change which tool is called');
    }
    return bareDecision(plan.request.id, type, rest.approver, message, editedAction);
  });
}

/** A bare (unsigned) decision for `approvalId`: counted only in the `unverified` development mode. */
function bareDecision(
  approvalId: string,
  type: unknown,
  approver: unknown,
  message: unknown,
  editedAction: { args?: unknown } | undefined,
): Record<string, unknown> {
  return {
    approvalId,
    decision: type,
    approver,
    ...(typeof message === 'string' ? { reason: message } : {}),
    ...(type === 'edit' ? { editedArgs: editedAction?.args } : {}),
  };
}

// An entry naming no approval: applyResume refuses it as `resume_payload_invalid`.
function invalid(why: string): { invalidDecision: string } {
  return { invalidDecision: why };
}
