import { contentHash, sha256Hex } from '../audit/sha256.js';
import { jsonSchemaOf } from './json-schema.js';
import { toJsonSafe } from './tool-call-io.js';
import type { AnyGovernedTool } from './types.js';

/** What identifies one logical tool execution: the call, in its thread. */
export interface IdempotencyKeyParts {
  threadId: string;
  toolCallId: string;
}

/**
 * The deterministic idempotency key of a tool call: `idem_` + SHA-256 hex of the canonical
 * JSON of `["veridex.idempotency/v2", threadId, toolCallId]`. The same call re-run by
 * LangGraph (after a resume, a crash, or a deploy that reworded the tool's description) gets
 * the same key and finds its earlier execution; what the call was — tool, input schema,
 * arguments — is its {@link callFingerprint}, and a different one under the same key is an
 * `idempotency_conflict`, never a silent second run. Never random.
 *
 * @example idempotencyKeyFor({ threadId: 't1', toolCallId: 'call_1' }) // 'idem_3f…'
 */
export function idempotencyKeyFor(parts: IdempotencyKeyParts): string {
  // JSON.stringify of an array of strings is already its RFC 8785 form.
  const text = JSON.stringify([
    'veridex.idempotency/v2',
    String(parts.threadId),
    String(parts.toolCallId),
  ]);
  return `idem_${sha256Hex(text)}`;
}

/**
 * What one execution under a key was: SHA-256 of the canonical JSON of the tool's name, its
 * input JSON Schema and the validated arguments. Rewording a description leaves it unchanged;
 * changing an argument, the input schema or the tool does not.
 */
export function callFingerprint(tool: AnyGovernedTool, input: unknown): string {
  return contentHash({
    tool: tool.name,
    inputSchema: jsonSchemaOf(tool.input, 'input'),
    arguments: toJsonSafe(input),
  });
}
