import { contentHash } from '../audit/index.js';
import type { AnyGovernedTool } from '../tools/types.js';
import { type ToolProposalEnvelope, toolProposalHash } from './tool-proposal-hash.js';
import type { HandoffProposal, MemoryWriteProposal, ToolProposal } from './types.js';

export { type ToolProposalEnvelope, toolProposalHash } from './tool-proposal-hash.js';

/** The envelope of a tool proposal (JSON-safe; what approvers see and what is hashed). */
export function toolProposalEnvelope(proposal: Omit<ToolProposal, 'hash'>): ToolProposalEnvelope {
  return {
    kind: 'tool',
    toolName: proposal.toolName,
    schemaHash: proposal.schemaHash,
    arguments: proposal.arguments,
    threadId: proposal.threadId,
    toolCallId: proposal.toolCallId,
  };
}

/**
 * Builds a tool proposal and its envelope hash: SHA-256 of the canonical JSON of kind, tool
 * name, schema hash, arguments, thread id and tool call id. Re-building it from the same
 * state gives the same hash, which is how a mutation between request and resume is caught.
 *
 * @throws VeridexError `canonical_json_invalid` if the arguments are not JSON (e.g. a bigint).
 */
export function buildToolProposal(input: {
  tool: AnyGovernedTool;
  arguments: Record<string, unknown>;
  threadId: string;
  runId: string;
  toolCallId: string;
  proposer: string;
}): ToolProposal {
  const draft: Omit<ToolProposal, 'hash'> = {
    kind: 'tool',
    tool: input.tool,
    toolName: input.tool.name,
    schemaHash: input.tool.schemaHash,
    safetyClass: input.tool.safetyClass,
    trust: input.tool.trust,
    arguments: input.arguments,
    threadId: input.threadId,
    runId: input.runId,
    toolCallId: input.toolCallId,
    proposer: input.proposer,
  };
  return { ...draft, hash: toolProposalHash(toolProposalEnvelope(draft)) };
}

/**
 * The fields of a memory-write proposal its hash covers: kind, write id, tier, namespace,
 * content, confidence, source, tags, key and thread.
 */
export function memoryWriteProposalEnvelope(
  proposal: Omit<MemoryWriteProposal, 'hash'>,
): Record<string, unknown> {
  return {
    kind: 'memory_write',
    writeId: proposal.writeId,
    tier: proposal.tier,
    namespace: proposal.namespace,
    content: proposal.content,
    confidence: proposal.confidence,
    source: proposal.source,
    tags: proposal.tags,
    threadId: proposal.threadId,
    ...(proposal.key === undefined ? {} : { key: proposal.key }),
  };
}

/** Builds a memory-write proposal; the hash is over {@link memoryWriteProposalEnvelope}. */
export function buildMemoryWriteProposal(
  input: Omit<MemoryWriteProposal, 'kind' | 'hash'>,
): MemoryWriteProposal {
  const draft = { kind: 'memory_write' as const, ...input };
  return { ...draft, hash: contentHash(memoryWriteProposalEnvelope(draft)) };
}

/** The fields of a hand-off proposal its hash covers: kind, from, to, payload hash, token count and thread. */
export function handoffProposalEnvelope(
  proposal: Omit<HandoffProposal, 'hash'>,
): Record<string, unknown> {
  return {
    kind: 'handoff',
    from: proposal.from,
    to: proposal.to,
    payloadHash: proposal.payloadHash,
    tokenCount: proposal.tokenCount,
    threadId: proposal.threadId,
  };
}

/** Builds a hand-off proposal; the hash is over {@link handoffProposalEnvelope}. */
export function buildHandoffProposal(
  input: Omit<HandoffProposal, 'kind' | 'hash'>,
): HandoffProposal {
  const draft = { kind: 'handoff' as const, ...input };
  return { ...draft, hash: contentHash(handoffProposalEnvelope(draft)) };
}
