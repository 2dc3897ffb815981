import { sha256Hex } from '../audit/sha256.js';

/** What identifies one logical tool execution. */
export interface IdempotencyKeyParts {
  threadId: string;
  toolCallId: string;
  /** Hash of the (approved) proposal envelope; `''` when the call had no proposal. */
  proposalHash: string;
}

/**
 * The deterministic idempotency key of a tool call: `idem_` + SHA-256 hex of the canonical
 * JSON of `["veridex.idempotency/v1", threadId, toolCallId, proposalHash]`. The same call
 * re-run by LangGraph (after a resume or a crash) gets the same key; a changed proposal gets
 * another. Never random.
 *
 * @example idempotencyKeyFor({ threadId: 't1', toolCallId: 'call_1', proposalHash: 'ab…' }) // 'idem_3f…'
 */
export function idempotencyKeyFor(parts: IdempotencyKeyParts): string {
  // JSON.stringify of an array of strings is already its RFC 8785 form.
  const text = JSON.stringify([
    'veridex.idempotency/v1',
    String(parts.threadId),
    String(parts.toolCallId),
    String(parts.proposalHash),
  ]);
  return `idem_${sha256Hex(text)}`;
}
