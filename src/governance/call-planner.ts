import type { ToolCall } from '@langchain/core/messages';
import type { ApprovalManager, ApprovalRequest } from '../approvals/index.js';
import { type AuditBatch, type AuditLog, deriveEventId, verbatimDigests } from '../audit/index.js';
import { VeridexError, type VeridexErrorCode } from '../errors/index.js';
import {
  buildToolProposal,
  type PolicyDecision,
  type PolicyEngine,
  type ToolProposal,
} from '../policy/index.js';
import type { AnyGovernedTool, ToolRegistry } from '../tools/index.js';
import { summarizeIssues } from '../tools/summarize-issues.js';
import { parseSync, toArguments } from '../tools/tool-call-io.js';
import { ToolRunReport } from '../tools/tool-run-report.js';
import { decisionNotAllowed, type ReviewConfigs } from './review-config.js';

/** Everything the planner needs about the call's surroundings. */
export interface PlanContext {
  threadId: string;
  runId: string;
  turnIndex: number;
  proposer: string;
  registry: ToolRegistry;
  policy: PolicyEngine;
  approvals: ApprovalManager;
  audit: AuditLog;
  /**
   * Collects `tool_proposed` and `policy_decision` events so that each planning pass writes
   * them in one append; the planner flushes it before opening an approval request (to keep
   * the chain in causal order) and the node flushes it when planning is done.
   */
  events: AuditBatch;
  /** Decisions reviewers may take per tool: a request decided otherwise does not clear its call. */
  review?: ReviewConfigs | undefined;
}

/** A call that will not run; `message` is what the model reads (made safe by `failureOf`). */
export interface FailedPlan {
  kind: 'failed';
  call: ToolCall;
  code: VeridexErrorCode | string;
  message: string;
  /** Scalar facts for callers (e.g. the `approvalId` of an `approval_required` call). */
  details?: Record<string, unknown>;
}

/** A call waiting for human decisions. */
export interface PendingPlan {
  kind: 'pending';
  call: ToolCall;
  tool: AnyGovernedTool;
  proposal: ToolProposal;
  /** The proposal's arguments as the tool's input schema parsed them. */
  input: unknown;
  request: ApprovalRequest;
  revision: number;
  /** The live policy decision that escalated this version: what its approval must prove. */
  decision: EscalateDecision;
  /** Whoever edited the arguments into this version (they never count as approvers). */
  editors: readonly string[];
}

type EscalateDecision = Extract<PolicyDecision, { verdict: 'escalate' }>;

/** A call cleared to run (by policy, or by approvers). */
export interface AllowedPlan {
  kind: 'allowed';
  call: ToolCall;
  tool: AnyGovernedTool;
  proposal: ToolProposal;
  /** The proposal's arguments as the tool's input schema parsed them: what the tool receives. */
  input: unknown;
  approvedBy: string[];
}

/** Arguments that passed the tool's input schema: as proposed, and as parsed. */
interface ValidArguments {
  args: Record<string, unknown>;
  input: unknown;
}

/** Where one tool call stands after pins, validation, policy and approvals. */
export type CallPlan = FailedPlan | PendingPlan | AllowedPlan;

/**
 * Decides one tool call without running it: the tool (`given`, else the registry's tool of
 * that name) must exist and match its pin, the
 * arguments must validate, and the policy engine decides; an escalated call is matched to
 * its (possibly already decided) approval request. Re-planning the same call after a resume
 * yields the same proposal hash, so a changed argument is caught as
 * `proposal_mutation_detected`.
 */
export async function planCall(
  call: ToolCall,
  context: PlanContext,
  given?: AnyGovernedTool,
): Promise<CallPlan> {
  const callId = call.id ?? '';
  // A path that holds the tool object itself (runTool, a converted tool) checks THAT object's
  // pin: a tampered copy must not borrow the registered original's name.
  const tool = given && given.name === call.name ? given : context.registry.get(call.name);
  if (!tool) {
    // ToolNode's wording, word for word: code written against ToolNode matches on it.
    const message = `Tool "${call.name}" not found.`;
    context.events.append({
      threadId: context.threadId,
      runId: context.runId,
      turnIndex: context.turnIndex,
      eventId: deriveEventId(context.threadId, 'tool_failed', callId),
      type: 'tool_failed',
      payload: { toolName: call.name, toolCallId: callId, code: 'tool_not_found' },
    });
    return { kind: 'failed', call, code: 'tool_not_found', message };
  }
  const pinProblem = context.registry.check(tool);
  if (pinProblem) return reportFailure(call, tool, context, pinProblem);
  const checked = await validateArguments(call, tool, toArguments(call.args), context);
  if (checked.kind === 'failed') return checked;
  return planProposal(call, tool, checked, 0, context);
}

/** Brings a pending plan up to date with its request (decisions, expiry, edits). */
export async function refreshPlan(plan: PendingPlan, context: PlanContext): Promise<CallPlan> {
  const request = await context.approvals.require(plan.request.id);
  return fromRequest(plan, request, context);
}

async function planProposal(
  call: ToolCall,
  tool: AnyGovernedTool,
  { args, input }: ValidArguments,
  revision: number,
  context: PlanContext,
  editors: readonly string[] = [],
): Promise<CallPlan> {
  const proposal = buildToolProposal({
    tool,
    arguments: args,
    threadId: context.threadId,
    runId: context.runId,
    toolCallId: call.id ?? '',
    proposer: context.proposer,
  });
  context.events.append({
    threadId: context.threadId,
    runId: context.runId,
    turnIndex: context.turnIndex,
    eventId: deriveEventId(context.threadId, 'tool_proposed', proposal.toolCallId, revision),
    type: 'tool_proposed',
    ...verbatimDigests(
      {
        // In code-unit order, the order of the canonical form the event is hashed in.
        arguments: args,
        proposalHash: proposal.hash,
        revision,
        safetyClass: tool.safetyClass,
        schemaHash: tool.schemaHash,
        toolCallId: proposal.toolCallId,
        toolName: tool.name,
      },
      ['schemaHash', 'proposalHash'],
    ),
  });
  const decision = await context.policy.evaluate(proposal, { audit: context.events });
  if (decision.verdict === 'allow')
    return { kind: 'allowed', call, tool, proposal, input, approvedBy: [] };
  if (decision.verdict === 'deny') {
    return {
      kind: 'failed',
      call,
      code: decision.code ?? 'policy_denied',
      message: `Policy denied "${tool.name}": ${decision.reason} (rule ${decision.ruleId}).`,
    };
  }
  await context.events.flush();
  const request = await context.approvals.request(proposal, decision, {
    revision,
    summary: { toolName: tool.name, safetyClass: tool.safetyClass, arguments: args },
    ...(editors.length > 0 ? { proposers: editors } : {}),
  });
  if (request.proposalHash !== proposal.hash) {
    await context.audit.append({
      threadId: context.threadId,
      runId: context.runId,
      turnIndex: context.turnIndex,
      eventId: deriveEventId(
        context.threadId,
        'security_event',
        'proposal_mutation_detected',
        request.id,
        proposal.hash,
      ),
      type: 'security_event',
      payload: {
        kind: 'proposal_mutation_detected',
        approvalId: request.id,
        toolName: tool.name,
        toolCallId: proposal.toolCallId,
        approvedHash: request.proposalHash,
        currentHash: proposal.hash,
      },
    });
    return {
      kind: 'failed',
      call,
      code: 'proposal_mutation_detected',
      message: `The arguments of "${tool.name}" changed after approval ${request.id} was requested; the call was not executed. Propose it again.`,
    };
  }
  return fromRequest(
    { call, tool, proposal, input, revision, decision, editors },
    request,
    context,
  );
}

async function fromRequest(
  plan: Omit<PendingPlan, 'kind' | 'request'>,
  request: ApprovalRequest,
  context: PlanContext,
): Promise<CallPlan> {
  const { call, tool, proposal, input, revision } = plan;
  // Decisions made out of band (the inbox, the CLI) are held to the tool's allowed decisions too.
  const taken =
    request.status === 'approved'
      ? 'approve'
      : request.status === 'edited'
        ? 'edit'
        : request.status === 'rejected'
          ? 'reject'
          : undefined;
  const notAllowed =
    taken === undefined ? undefined : decisionNotAllowed(context.review, tool.name, taken);
  if (notAllowed !== undefined) {
    await context.audit.append({
      threadId: context.threadId,
      runId: context.runId,
      eventId: deriveEventId(
        context.threadId,
        'security_event',
        'decision_not_allowed',
        request.id,
      ),
      type: 'security_event',
      payload: { kind: 'decision_not_allowed', approvalId: request.id, decision: taken },
    });
    return {
      kind: 'failed',
      call,
      code: 'decision_not_allowed',
      message: `Approval ${request.id} was decided "${taken}", ${notAllowed}; the call was not executed.`,
    };
  }
  switch (request.status) {
    case 'approved': {
      // The status is a claim: the quorum is recomputed from the signed decisions (README, *Security*).
      const proof = await context.approvals.prove(request, proposal, plan.decision, {
        editors: plan.editors,
      });
      if (!proof.proven) return unproven(call, tool, request, proof.reason);
      return { kind: 'allowed', call, tool, proposal, input, approvedBy: proof.approvers };
    }
    case 'pending':
      return { kind: 'pending', ...plan, request };
    case 'rejected': {
      const rejection = request.decisions.find((d) => d.decision === 'reject');
      return {
        kind: 'failed',
        call,
        code: 'approval_rejected',
        message: `"${tool.name}" was rejected by ${rejection?.approver ?? 'an approver'}${rejection?.reason ? `: ${rejection.reason}` : ''}.`,
      };
    }
    case 'expired':
      return {
        kind: 'failed',
        call,
        code: 'approval_expired',
        message: `Approval ${request.id} for "${tool.name}" expired at ${request.expiresAt}; the call was not executed.`,
      };
    case 'edited': {
      const proof = await context.approvals.prove(request, proposal, plan.decision, {
        editors: plan.editors,
      });
      if (!proof.proven || !proof.record) {
        return unproven(call, tool, request, proof.proven ? 'no edit' : proof.reason);
      }
      const edit = proof.record;
      const edited = edit.editedArgs ?? {};
      const checked = await validateArguments(call, tool, edited, context);
      if (checked.kind === 'failed') return checked;
      // The edited call is a new proposal: re-hashed, re-evaluated, maybe re-approved — and
      // whoever edited it (like everyone who proposed the earlier version) cannot approve it.
      return planProposal(call, tool, checked, revision + 1, context, [
        ...request.proposers,
        ...plan.editors,
        edit.approver,
        // Whoever the editor's key answers to proposed the edit too: an admin's puppet edits,
        // the admin must not approve what it wrote.
        ...(proof.sponsors ?? []),
      ]);
    }
  }
}

/** A call whose request claims a decision its recorded, verified decisions do not prove. */
function unproven(
  call: ToolCall,
  tool: AnyGovernedTool,
  request: ApprovalRequest,
  reason: string,
): FailedPlan {
  return {
    kind: 'failed',
    call,
    code: 'approval_unproven',
    message: `"${tool.name}" was not executed: approval ${request.id} is recorded as ${request.status}, but ${reason}. Propose the call again and have it decided with signed decisions.`,
    details: { approvalId: request.id, status: request.status },
  };
}

async function validateArguments(
  call: ToolCall,
  tool: AnyGovernedTool,
  args: unknown,
  context: PlanContext,
): Promise<FailedPlan | ({ kind: 'valid' } & ValidArguments)> {
  const parsed = parseSync(tool.input, args) ?? (await tool.input.safeParseAsync(args));
  // What passes an object schema is an object: the proposal hashes it as the model sent it.
  if (parsed.success)
    return { kind: 'valid', args: args as Record<string, unknown>, input: parsed.data };
  const error = new VeridexError(
    'input_invalid',
    `Invalid arguments for tool "${tool.name}": ${summarizeIssues(parsed.error.issues)}. Fix the arguments and call the tool again.`,
  );
  return reportFailure(call, tool, context, error);
}

async function reportFailure(
  call: ToolCall,
  tool: AnyGovernedTool,
  context: PlanContext,
  error: VeridexError,
): Promise<FailedPlan> {
  const scope = {
    threadId: context.threadId,
    toolCallId: call.id ?? '',
    runId: context.runId,
    turnIndex: context.turnIndex,
  };
  const failure = await new ToolRunReport(tool, scope, context.audit, context.audit.scrubber).fail(
    error,
  );
  return {
    kind: 'failed',
    call,
    code: error.code,
    message: failure.status === 'error' ? failure.message : error.message,
  };
}
