import { deriveApprovalId } from '../approvals/approval-id.js';
import { toolProposalHash } from '../policy/tool-proposal-hash.js';
import { personKey, speakersOf } from './same-person.js';
import type { TraceEvent } from './trace-event.js';
import type { DecisionCheck } from './verify-decisions.js';

/** How {@link checkExecutedCalls} treats decisions taken in the `unverified` development mode. */
export interface ExecutionCheckOptions {
  /**
   * Count bare-name decisions on requests that were opened in the explicit `unverified`
   * development mode (`veridex verify --allow-unverified`). Never counts them on a request
   * opened `signed`, and never makes them verified: they stay marked `unverified`.
   */
  allowUnverified?: boolean;
  /**
   * Count signed decisions whose key the bundle itself carries but no trusted approver list
   * vouches for (`veridex verify --trust-bundle-keys`). Off by default: whoever holds the
   * evidence key could have minted both the approver keys and their signatures, so a quorum
   * proves something only against the approvers you trust (`approvers`).
   */
  trustBundleKeys?: boolean;
}

/** The fewest approvals each route can ever need: a recorded smaller number is a forgery. */
const ROUTE_MINIMUM: Readonly<Record<string, number>> = {
  auto: 0,
  human_required: 1,
  dual_approval: 2,
  policy_pack: 1,
};

interface RequestFacts {
  approvalId: string;
  proposalHash: string;
  route: string;
  requiredApprovals: number;
  identityMode: string;
  /** The proposers' identity keys ({@link personKey}). */
  proposers: Set<string>;
}

/**
 * The evidence is only as good as what it proves about the calls that ran (README, *Security*,
 * "an auditor's view of approvals"). For every `tool_executed` event this finds the policy
 * decision that cleared that version of the call, and when it escalated, demands from the
 * bundle itself a quorum of decisions that verify: signed, by distinct approvers who did not
 * propose the call, bound to the request's approval id and proposal hash. A status recorded
 * as `approved` proves nothing on its own (an insider can write one). Earlier versions of the
 * call that were replaced by an edit need a verifying `edit` decision. Decisions taken in the
 * `unverified` development mode count only on requests opened in that mode, and only with
 * `allowUnverified`; on a request opened `signed` they are a problem.
 *
 * Returns the problems that make the bundle invalid (empty when every executed call is proven).
 */
export function checkExecutedCalls(
  events: readonly TraceEvent[],
  checks: readonly DecisionCheck[],
  options: ExecutionCheckOptions = {},
): string[] {
  const problems: string[] = [];
  const requests = requestsByCall(events);
  const decisionsOf = groupBy(checks, (check) => check.approvalId);
  const resolvedTier = approvedTiers(events);
  const latestDecision = new Map<string, Record<string, unknown>>();
  const flagged = new Set<string>();

  for (const request of requests.values()) {
    for (const facts of request) {
      for (const check of decisionsOf.get(facts.approvalId) ?? []) {
        if (check.status !== 'unverified' || facts.identityMode !== 'signed') continue;
        if (flagged.has(facts.approvalId)) continue;
        flagged.add(facts.approvalId);
        problems.push(
          `approval ${facts.approvalId} was opened in signed mode but holds an unverified (bare-name) decision by "${check.approver}"`,
        );
      }
    }
  }

  const classes = recordedClasses(events);

  for (const event of events) {
    const payload = event.payload;
    if (event.type === 'policy_decision' && typeof payload.toolCallId === 'string') {
      latestDecision.set(payload.toolCallId, payload);
      continue;
    }
    if (event.type !== 'tool_executed') continue;
    if (typeof payload.toolCallId !== 'string') {
      // Every execution the library records names its call: one that does not is unaccounted.
      problems.push(
        `a tool_executed event (${String(payload.toolName ?? 'unnamed tool').slice(0, 80)}) names no tool call id`,
      );
      continue;
    }
    const callId = payload.toolCallId;
    const decision = latestDecision.get(callId);
    const callRequests = requests.get(callId) ?? [];
    if (decision === undefined) {
      // Every path to a tool with effects plans it through the policy engine first: such a call
      // the bundle holds no decision for was cleared by nothing the bundle proves. Reads are
      // also run inside other tools (the treasury kit's balance check and screening), unplanned.
      if (payload.safetyClass !== 'read') {
        problems.push(
          `call ${callId} was executed, but the bundle holds no policy decision for it`,
        );
      } else {
        const elsewhere = [...(classes.get(toolKey(payload)) ?? [])].filter((c) => c !== 'read');
        if (elsewhere.length > 0) {
          problems.push(
            `call ${callId} ran unplanned as a read, but the bundle records ${String(payload.toolName)} as ${elsewhere.sort().join(', ')} elsewhere`,
          );
        }
      }
      continue;
    }
    if (decision.verdict === 'deny') {
      problems.push(`call ${callId} was executed although its policy decision denied it`);
      continue;
    }
    const other = otherToolProblem(events, callId, decision, payload);
    if (other) problems.push(`call ${callId} was executed, but ${other}`);
    for (const facts of callRequests) {
      const executedThisVersion =
        decision.verdict === 'escalate' && facts.proposalHash === decision.proposalHash;
      const decisions = decisionsOf.get(facts.approvalId) ?? [];
      if (executedThisVersion && facts.route !== decision.route) {
        // The request's route is the policy decision's; a request recorded under a cheaper
        // route than the decision escalated to is a relabelling, whatever its decisions.
        problems.push(
          `call ${callId} was executed, but approval ${facts.approvalId} records route ${facts.route} where its policy decision escalated to ${String(decision.route)}`,
        );
      }
      if (executedThisVersion) {
        const bound = bindingProblem(events, event.threadId, callId, facts);
        if (bound) problems.push(`call ${callId} was executed, but ${bound}`);
        const problem = quorumProblem(
          facts,
          String(decision.route),
          decisions,
          resolvedTier.get(facts.approvalId),
          options,
        );
        if (problem) problems.push(`call ${callId} was executed, but ${problem}`);
        // A signed rejection is final: no later approvals make the call allowed.
        const rejection = decisions.find(
          (check) => check.decision === 'reject' && counts(check, facts, options),
        );
        if (rejection) {
          problems.push(
            `call ${callId} was executed, but "${rejection.approver}" rejected approval ${facts.approvalId} with a verifying decision`,
          );
        }
      } else if (
        !decisions.some((check) => check.decision === 'edit' && counts(check, facts, options))
      ) {
        problems.push(
          `call ${callId} was executed in another version than approval ${facts.approvalId} was requested for, and no verifying edit decision replaced that version`,
        );
      }
    }
    if (
      decision.verdict === 'escalate' &&
      !callRequests.some((f) => f.proposalHash === decision.proposalHash)
    ) {
      problems.push(
        `call ${callId} was executed after its policy decision escalated, but the bundle holds no approval request for it`,
      );
    }
  }
  return problems;
}

/**
 * A `tool_executed` event names its call and its tool; the policy decision found for that call
 * names the tool it cleared. An execution moved under another call's id (a read's, whose
 * decision allowed it) is another tool than that decision cleared.
 */
function otherToolProblem(
  events: readonly TraceEvent[],
  callId: string,
  decision: Record<string, unknown>,
  executed: Record<string, unknown>,
): string | undefined {
  if (decision.toolName !== undefined && decision.toolName !== executed.toolName) {
    return `its policy decision cleared ${String(decision.toolName)}, not the ${String(executed.toolName)} it records`;
  }
  const proposed = events.find(
    (event) =>
      event.type === 'tool_proposed' &&
      event.payload.toolCallId === callId &&
      event.payload.proposalHash === decision.proposalHash,
  );
  if (proposed && proposed.payload.schemaHash !== executed.schemaHash) {
    return `the version its policy decision cleared has another schema than the tool it records`;
  }
  return undefined;
}

/**
 * The safety classes each tool (name and schema hash) is recorded with. An unplanned execution
 * passes as a read only where no other event records that tool with another class: a transfer's
 * execution relabelled `read` contradicts the transfer's own proposal.
 */
function recordedClasses(events: readonly TraceEvent[]): Map<string, Set<string>> {
  const classes = new Map<string, Set<string>>();
  for (const event of events) {
    if (!event.type.startsWith('tool_') || typeof event.payload.safetyClass !== 'string') continue;
    const key = toolKey(event.payload);
    const seen = classes.get(key) ?? new Set<string>();
    seen.add(event.payload.safetyClass);
    classes.set(key, seen);
  }
  return classes;
}

function toolKey(payload: Record<string, unknown>): string {
  return JSON.stringify([payload.toolName, payload.schemaHash]);
}

/**
 * The signatures are over an approval id and a proposal hash; the bundle shows arguments. Both
 * are recomputed here from what the bundle shows — the approval id from this thread and call,
 * the hash from the recorded arguments — so real signatures cannot be carried to another
 * thread's call, nor arguments swapped under them.
 */
function bindingProblem(
  events: readonly TraceEvent[],
  threadId: string,
  callId: string,
  facts: RequestFacts,
): string | undefined {
  const proposed = events.find(
    (event) =>
      event.type === 'tool_proposed' &&
      event.payload.toolCallId === callId &&
      event.payload.proposalHash === facts.proposalHash,
  );
  if (!proposed) {
    return `the bundle holds no tool_proposed event for the version approval ${facts.approvalId} was requested for`;
  }
  const { toolName, schemaHash, arguments: args, revision } = proposed.payload;
  let recomputed: string | undefined;
  try {
    recomputed = toolProposalHash({
      kind: 'tool',
      toolName: String(toolName),
      schemaHash: String(schemaHash),
      arguments: (args ?? {}) as Record<string, unknown>,
      threadId,
      toolCallId: callId,
    });
  } catch {
    recomputed = undefined;
  }
  if (recomputed !== facts.proposalHash) {
    return `the arguments recorded for it are not the proposal approval ${facts.approvalId} was signed for (its hash does not recompute)`;
  }
  const expectedId = deriveApprovalId(
    threadId,
    callId,
    typeof revision === 'number' ? revision : 0,
  );
  if (facts.approvalId !== expectedId) {
    return `approval ${facts.approvalId} is not the approval of this thread's call (${expectedId})`;
  }
  return undefined;
}

function quorumProblem(
  facts: RequestFacts,
  decidedRoute: string,
  decisions: readonly DecisionCheck[],
  tier: { tier?: number; requiredApprovals?: number } | undefined,
  options: ExecutionCheckOptions,
): string | undefined {
  if (facts.identityMode === 'unverified' && !options.allowUnverified) {
    return `approval ${facts.approvalId} was decided in the unverified development mode (bare names, nobody proved who decided); pass --allow-unverified (allowUnverified) to accept such a bundle`;
  }
  const floor = Math.max(ROUTE_MINIMUM[facts.route] ?? 1, ROUTE_MINIMUM[decidedRoute] ?? 1);
  const required = Math.max(floor, tier?.requiredApprovals ?? facts.requiredApprovals);
  if (required === 0) return undefined;
  // Distinct people: a decision speaks for its approver and every sponsor up its key's chain, each compared by
  // identity key, so look-alike ids in the trusted approvers are one person.
  const byTier = new Map<number, { used: Set<string>; count: number }>();
  for (const check of decisions) {
    if (check.decision !== 'approve' || !counts(check, facts, options)) continue;
    const speakers = speakersOf(check);
    if (speakers.some((speaker) => facts.proposers.has(speaker))) continue;
    if (check.proposalHash !== undefined && check.proposalHash !== facts.proposalHash) continue;
    const at = check.tier ?? 0;
    if (tier?.tier !== undefined && at !== tier.tier) continue;
    const counted = byTier.get(at) ?? { used: new Set<string>(), count: 0 };
    if (speakers.some((speaker) => counted.used.has(speaker))) continue;
    for (const speaker of speakers) counted.used.add(speaker);
    counted.count += 1;
    byTier.set(at, counted);
  }
  const best = Math.max(0, ...[...byTier.values()].map((counted) => counted.count));
  if (best >= required) return undefined;
  const untrusted = decisions.some(
    (check) => check.decision === 'approve' && check.status === 'valid' && !check.keyTrusted,
  );
  return `approval ${facts.approvalId} (${facts.route}) has ${best} verifying approval(s) by distinct non-proposers in the bundle, ${required} required${untrusted ? ' (signatures by keys only the bundle vouches for do not count: pass the approvers you trust, --approvers approvers.json, or accept the bundle’s own keys with --trust-bundle-keys)' : ''}`;
}

/** Whether a decision check may count toward this request's quorum. */
function counts(
  check: DecisionCheck,
  facts: RequestFacts,
  options: ExecutionCheckOptions,
): boolean {
  if (check.status === 'valid') return check.keyTrusted || options.trustBundleKeys === true;
  return (
    check.status === 'unverified' &&
    facts.identityMode === 'unverified' &&
    options.allowUnverified === true
  );
}

/** Every `approval_requested` of the bundle, by the tool call it is about. */
function requestsByCall(events: readonly TraceEvent[]): Map<string, RequestFacts[]> {
  const byCall = new Map<string, RequestFacts[]>();
  for (const event of events) {
    if (event.type !== 'approval_requested') continue;
    const p = event.payload;
    if (typeof p.toolCallId !== 'string') continue;
    const list = byCall.get(p.toolCallId) ?? [];
    list.push({
      approvalId: String(p.approvalId),
      proposalHash: String(p.proposalHash),
      route: String(p.route),
      requiredApprovals: typeof p.requiredApprovals === 'number' ? p.requiredApprovals : 1,
      // Requests recorded before the mode was written were opened signed (the only mode then).
      identityMode: p.identityMode === 'unverified' ? 'unverified' : 'signed',
      proposers: new Set(
        Array.isArray(p.proposers)
          ? p.proposers.map((proposer) => personKey(String(proposer)))
          : [],
      ),
    });
    byCall.set(p.toolCallId, list);
  }
  return byCall;
}

/** The tier and quorum each `approved` resolution was reached at. */
function approvedTiers(
  events: readonly TraceEvent[],
): Map<string, { tier?: number; requiredApprovals?: number }> {
  const tiers = new Map<string, { tier?: number; requiredApprovals?: number }>();
  for (const event of events) {
    if (event.type !== 'approval_resolved' || event.payload.status !== 'approved') continue;
    const { tier, requiredApprovals } = event.payload;
    tiers.set(String(event.payload.approvalId), {
      ...(typeof tier === 'number' ? { tier } : {}),
      ...(typeof requiredApprovals === 'number' ? { requiredApprovals } : {}),
    });
  }
  return tiers;
}

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const list = groups.get(key(item)) ?? [];
    list.push(item);
    groups.set(key(item), list);
  }
  return groups;
}
