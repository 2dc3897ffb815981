import type { z } from 'zod';
import { type CanonicalValue, canonicalJson } from '../audit/canonical-json.js';
import { sha256Hex } from '../audit/sha256.js';
import { canonicalJsonSchemaOf, jsonSchemaOf } from './json-schema.js';
import type { SafetyClass, ToolAnnotations, ToolSandboxSpec } from './types.js';

/** The fields a tool's schema pin covers. */
export interface PinnedFields {
  name: string;
  description: string;
  input: z.ZodType;
  output: z.ZodType;
  safetyClass: SafetyClass;
  annotations?: ToolAnnotations | undefined;
  /** Names of the secrets the tool may read. */
  secrets?: readonly string[] | undefined;
  /** Per-execution timeout. */
  timeoutMs?: number | undefined;
  /** The sandbox's network and environment allowlists are pinned (not `module`/`exportName`). */
  sandbox?: Pick<ToolSandboxSpec, 'networkAllowlist' | 'envAllowlist'> | undefined;
}

/**
 * The schema pin of a tool: SHA-256 hex of the RFC 8785 canonical JSON of
 * `{ name, description, inputJsonSchema, outputJsonSchema, safetyClass, annotations, secrets,
 * timeoutMs, networkAllowlist, envAllowlist }` (absent fields left out, so a tool without
 * secrets, timeout or allowlists keeps the pin it had before they were covered), where the
 * JSON Schemas are zod 4's rendering of the input (accepted side) and output (produced side)
 * including registry metadata such as descriptions. Any change to what the model is told
 * about a tool, or to what the tool may reach (secrets, hosts, environment, time), changes
 * the pin.
 *
 * @throws VeridexError `canonical_json_invalid` if a field has no canonical JSON form.
 * @example schemaHashOf(myTool) === myTool.schemaHash // true unless the tool was tampered with
 */
export function schemaHashOf(fields: PinnedFields): string {
  const { name, description, safetyClass, annotations } = fields;
  if (!isPlainString(name) || !isPlainString(description) || !isPlainString(safetyClass)) {
    return sha256Hex(canonicalJson(pinDocument(fields)));
  }
  // The document's keys in RFC 8785 order, with the cached canonical schema texts spliced in:
  // equal to canonicalJson(pinDocument(fields)) (a test checks this) at the cost of one hash.
  const member = (key: string, value: unknown) =>
    value === undefined ? '' : `,"${key}":${canonicalJson(value as CanonicalValue)}`;
  const text =
    (annotations === undefined ? '{' : `{"annotations":${canonicalJson(annotations)},`) +
    `"description":${JSON.stringify(description)}` +
    member('envAllowlist', fields.sandbox?.envAllowlist) +
    `,"inputJsonSchema":${canonicalJsonSchemaOf(fields.input, 'input')}` +
    `,"name":${JSON.stringify(name)}` +
    member('networkAllowlist', fields.sandbox?.networkAllowlist) +
    `,"outputJsonSchema":${canonicalJsonSchemaOf(fields.output, 'output')}` +
    `,"safetyClass":${JSON.stringify(safetyClass)}` +
    member('secrets', fields.secrets) +
    member('timeoutMs', fields.timeoutMs) +
    '}';
  return sha256Hex(text);
}

/** The document whose canonical JSON {@link schemaHashOf} hashes. */
export function pinDocument(fields: PinnedFields): Record<string, unknown> {
  return {
    name: fields.name,
    description: fields.description,
    inputJsonSchema: jsonSchemaOf(fields.input, 'input'),
    outputJsonSchema: jsonSchemaOf(fields.output, 'output'),
    safetyClass: fields.safetyClass,
    annotations: fields.annotations,
    secrets: fields.secrets,
    timeoutMs: fields.timeoutMs,
    networkAllowlist: fields.sandbox?.networkAllowlist,
    envAllowlist: fields.sandbox?.envAllowlist,
  };
}

function isPlainString(value: unknown): value is string {
  return (
    typeof value === 'string' && (value as string & { isWellFormed(): boolean }).isWellFormed()
  );
}
