import { contentHash } from '../audit/sha256.js';

/** The identifying fields of a tool proposal: exactly what its hash covers. */
export interface ToolProposalEnvelope {
  kind: 'tool';
  toolName: string;
  schemaHash: string;
  arguments: Record<string, unknown>;
  threadId: string;
  toolCallId: string;
}

/**
 * The proposal hash approvers sign: SHA-256 of the envelope's canonical JSON. A leaf module, so
 * the offline verifier recomputes it from a bundle's recorded arguments without the policy
 * engine.
 * @throws VeridexError `canonical_json_invalid` if the arguments are not JSON.
 */
export function toolProposalHash(envelope: ToolProposalEnvelope): string {
  return contentHash(envelope);
}
