import { canonicalJson } from '../audit/canonical-json.js';
import { sha256Hex } from '../audit/sha256.js';
import { VeridexError } from '../errors/index.js';
import { canonicalJsonSchemaOf } from './json-schema.js';
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
  // canonicalJson({ arguments, inputSchema, tool }), written from its parts: the schema's
  // canonical text is cached per schema, so a call hashes it without canonicalising it again.
  return sha256Hex(
    `{"arguments":${canonicalArguments(input)},"inputSchema":${canonicalJsonSchemaOf(tool.input, 'input')},"tool":${canonicalJson(tool.name)}}`,
  );
}

// The canonical JSON of `toJsonSafe(input)`. JSON data (what a zod schema usually produces) is
// already in that form; anything canonicalJson refuses (a bigint, a Date, NaN, an undefined
// array element) goes through toJsonSafe as before.
function canonicalArguments(input: unknown): string {
  if (input !== undefined) {
    try {
      return canonicalJson(input);
    } catch (error) {
      if (!VeridexError.is(error, 'canonical_json_invalid')) throw error;
    }
  }
  return canonicalJson(toJsonSafe(input));
}
