import { contentHash, type TraceEvent, verifyChain } from '../audit/index.js';
import {
  handoffProposalEnvelope,
  memoryWriteProposalEnvelope,
  toolProposalEnvelope,
} from '../policy/proposals.js';
import type { HandoffProposal, MemoryWriteProposal, ToolProposal } from '../policy/types.js';
import { deriveApprovalId } from './approval-id.js';
import type { ApprovalRequest } from './types.js';

/**
 * What an inbox may show of a request's proposal. Approvers sign the proposal HASH; they read
 * the ARGUMENTS. The row's `proposal` and `summary` are claims an insider can rewrite, so only
 * an envelope bound to `proposalHash` is shown, and only the fields that hash covers:
 * - `hash`: the stored envelope hashes to `proposalHash`;
 * - `redacted`: registered secrets or credentials were scrubbed from it before it was stored,
 *   so it cannot hash to `proposalHash`; it hashes to the digest (`shownProposalHash`) that the
 *   request's first `approval_requested` event recorded, in an unbroken hash chain, beside this
 *   `proposalHash` — in the thread and under the approval id that thread and call derive;
 * - `none`: bound to nothing. Nothing of it may be shown, and no inbox may take decisions on
 *   it (`proposal_tampered`); the agent's own interrupt still carries the call as proposed.
 */
export type ShownProposal =
  | {
      binding: 'hash' | 'redacted';
      /** The hashed fields of the envelope, exactly (tool: kind, tool name, schema hash, arguments, thread, call). */
      proposal: Record<string, unknown>;
      /** Display facts derived from `proposal` alone (a tool call's name and arguments). */
      summary: Record<string, unknown>;
    }
  | { binding: 'none'; problem: string };

/** The stored envelope's hashed fields and their digest, or why it is no envelope of this request. */
export type StoredEnvelope =
  | { envelope: Record<string, unknown>; digest: string }
  | { problem: string; digest?: undefined };

/**
 * Reads a stored proposal envelope back as what its kind's hash covers — nothing else it may
 * carry — bound to the request's thread and subject (the tool call, the write). Pure.
 */
export function storedEnvelope(request: ApprovalRequest): StoredEnvelope {
  const stored = request.proposal;
  if (typeof stored !== 'object' || stored === null || Array.isArray(stored)) {
    return { problem: 'the stored proposal is not an envelope' };
  }
  let envelope: Record<string, unknown>;
  let subject: unknown;
  switch (stored.kind) {
    case 'tool': {
      const args = stored.arguments;
      if (typeof args !== 'object' || args === null || Array.isArray(args)) {
        return { problem: 'the stored tool proposal has no arguments object' };
      }
      envelope = { ...toolProposalEnvelope(stored as unknown as ToolProposal) };
      subject = stored.toolCallId;
      break;
    }
    case 'memory_write':
      envelope = memoryWriteProposalEnvelope(stored as unknown as MemoryWriteProposal);
      subject = stored.writeId;
      break;
    case 'handoff':
      envelope = handoffProposalEnvelope(stored as unknown as HandoffProposal);
      subject = `${String(stored.from)}->${String(stored.to)}:${String(stored.payloadHash)}`;
      break;
    default:
      return { problem: `the stored proposal is of no known kind (${String(stored.kind)})` };
  }
  if (envelope.threadId !== request.threadId || subject !== request.subjectId) {
    return { problem: 'the stored proposal is about another thread or call than the request' };
  }
  try {
    return { envelope, digest: contentHash(envelope) };
  } catch {
    return { problem: 'the stored proposal is not JSON' };
  }
}

/** What may be shown beside the envelope: only what is derived from it. */
export function summaryOf(envelope: Record<string, unknown>): Record<string, unknown> {
  return envelope.kind === 'tool'
    ? { toolName: envelope.toolName, arguments: envelope.arguments }
    : {};
}

/** Edits open revisions 1, 2, …: a request id is looked for among this many. */
const MAX_REVISIONS = 256;

/**
 * Binds what `request` stores to its `proposalHash` (see {@link ShownProposal}). `loggedEvents`
 * reads the request thread's audit events; it is called only for an envelope that does not
 * hash to `proposalHash` (one scrubbed at rest, or one an insider rewrote).
 */
export async function bindShownProposal(
  request: ApprovalRequest,
  loggedEvents: (() => Promise<readonly TraceEvent[]>) | undefined,
): Promise<ShownProposal> {
  const stored = storedEnvelope(request);
  if (stored.digest === undefined) return { binding: 'none', problem: stored.problem };
  const shown = { proposal: stored.envelope, summary: summaryOf(stored.envelope) };
  if (stored.digest === request.proposalHash) return { binding: 'hash', ...shown };
  if (loggedEvents && derivesApprovalId(request)) {
    const events = await loggedEvents();
    const index = events.findIndex(
      (event) => event.type === 'approval_requested' && event.payload.approvalId === request.id,
    );
    const logged = events[index]?.payload;
    if (
      logged?.proposalHash === request.proposalHash &&
      logged.shownProposalHash === stored.digest &&
      verifyChain(events.slice(0, index + 1)).valid
    ) {
      return { binding: 'redacted', ...shown };
    }
  }
  return {
    binding: 'none',
    problem: `its stored proposal does not hash to its proposal hash ${String(request.proposalHash).slice(0, 12)}…, nor to the redacted form the audit log recorded when it was opened, so what it would show is not what approvers sign`,
  };
}

/**
 * Whether the request's id is the one its thread and subject derive (at some revision): the id
 * is what approvers sign and what the running gate proves against, so a row moved to another
 * thread — one whose log holds no record of it yet — keeps no id it could be decided under.
 */
function derivesApprovalId(request: ApprovalRequest): boolean {
  for (let revision = 0; revision < MAX_REVISIONS; revision++) {
    if (deriveApprovalId(request.threadId, request.subjectId, revision) === request.id) return true;
  }
  return false;
}
