import { z } from 'zod';
import { VeridexError } from '../errors/index.js';
import { type SanitizerFinding, sanitizeOutput } from '../tools/sanitize-output.js';
import { TOOL_NAME_PATTERN } from '../tools/tool.js';
import {
  SAFETY_CLASSES,
  type SafetyClass,
  type ToolAnnotations,
  type ToolDefinition,
} from '../tools/types.js';
import { assertImportableSchema } from './imported-schema-bounds.js';
import { type PoisoningKind, scanToolPoisoning } from './tool-poisoning.js';

/** The governance an imported tool did not have, given when importing it. */
export interface ImportedGovernance<Output extends z.ZodType = z.ZodType>
  extends Partial<
    Pick<
      ToolDefinition<z.ZodType, Output>,
      'idempotency' | 'approval' | 'retry' | 'timeoutMs' | 'sandbox' | 'annotations' | 'secrets'
    >
  > {
  /** Required: how dangerous the tool is (annotations may raise it, never lower it). */
  safetyClass: SafetyClass;
  /** Description cap in characters (default {@link IMPORTED_DESCRIPTION_LIMIT}). */
  maxDescriptionLength?: number;
}

/** Default cap on an imported tool's description (characters). */
export const IMPORTED_DESCRIPTION_LIMIT = 1024;
/** Cap on descriptions and titles inside an imported JSON Schema (characters). */
const SCHEMA_TEXT_LIMIT = 300;
/** Largest imported JSON Schema accepted (bytes of JSON). */
const SCHEMA_SIZE_LIMIT = 100_000;

/**
 * A tool name every model API accepts: characters outside `[A-Za-z0-9_-]` become `_`, an
 * optional prefix is added (`github_create_issue`), and the result is cut to 64 characters.
 *
 * @throws VeridexError `import_invalid` when nothing usable is left.
 */
export function normalizeToolName(name: unknown, prefix = ''): string {
  const cleaned = `${prefix}${String(name ?? '')}`
    .replace(/[^A-Za-z0-9_-]+/g, '_')
    .replace(/^_+|(?<!_)_+$/g, '') // the lookbehind keeps it linear (npm run lint:redos)
    .slice(0, 64);
  if (!TOOL_NAME_PATTERN.test(cleaned)) {
    throw new VeridexError(
      'import_invalid',
      `Imported tool name ${JSON.stringify(String(name)).slice(0, 80)} has no usable characters.`,
    );
  }
  return cleaned;
}

/**
 * Untrusted text from a tool's metadata, made safe to show a model: the output sanitiser
 * (hidden characters, role tokens, credentials) and a length cap with `…`. With `poisoning`,
 * poisoning blocks are removed first and their kinds added to it, and so are the changes the
 * sanitiser had to make that hold a tool (`invisible_text`, `role_token`: a description that
 * opens a system turn is hostile on its face, as the same token in a schema string is).
 */
export function sanitizeImportedText(
  text: unknown,
  limit: number,
  poisoning?: Set<PoisoningKind>,
): string {
  let raw = typeof text === 'string' ? text : '';
  if (poisoning) {
    // Poisoning blocks are removed before the sanitiser, which still sees what is left.
    const scan = scanToolPoisoning(raw);
    for (const kind of scan.findings) poisoning.add(kind);
    raw = scan.text;
  }
  const sanitized = sanitizeOutput(raw, { maxBytes: limit * 4 + 64 });
  if (poisoning) addHoldingFindings(sanitized.findings, poisoning);
  const clean = sanitized.content.replace(/\n\[truncated: \d+ bytes\]$/, '').trim();
  const characters = [...clean];
  return characters.length <= limit ? clean : `${characters.slice(0, limit - 1).join('')}…`;
}

/**
 * The description of an imported tool: sanitised, capped, never empty. With `poisoning`,
 * tool-poisoning blocks are removed first and their kinds added to it (see `scanToolPoisoning`).
 */
export function importedDescription(
  text: unknown,
  name: string,
  limit = IMPORTED_DESCRIPTION_LIMIT,
  poisoning?: Set<PoisoningKind>,
): string {
  return sanitizeImportedText(text, limit, poisoning) || `Imported tool ${name}.`;
}

/**
 * A zod schema from an imported JSON Schema, via zod 4's `z.fromJSONSchema`, after
 * sanitising it: descriptions and titles cleaned and capped, and objects that do not say
 * otherwise closed (`additionalProperties: false`), so the model can only send declared fields.
 * The sanitised schema is bounded before zod reads it (`assertImportableSchema`).
 *
 * @throws VeridexError `import_invalid` for oversized or unreadable schemas and patterns not
 *   proven linear-time; `import_too_large` for schemas whose `$ref`s expand too far.
 */
export function importJsonSchema(
  schema: unknown,
  where: string,
  poisoning?: Set<PoisoningKind>,
): z.ZodType {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    throw new VeridexError('import_invalid', `${where}: expected a JSON Schema object.`);
  }
  const size = JSON.stringify(schema).length;
  if (size > SCHEMA_SIZE_LIMIT) {
    throw new VeridexError(
      'import_invalid',
      `${where}: JSON Schema of ${size} bytes exceeds the ${SCHEMA_SIZE_LIMIT}-byte limit.`,
    );
  }
  try {
    const sanitized = sanitizeSchema(schema, 0, poisoning);
    // Bounded before zod reads it: $refs expanded, every pattern proven linear-time.
    assertImportableSchema(sanitized, where);
    return z.fromJSONSchema(sanitized as Parameters<typeof z.fromJSONSchema>[0]);
  } catch (error) {
    if (VeridexError.is(error) && error.details.where === where) throw error;
    throw new VeridexError(
      'import_invalid',
      `${where}: zod could not read the JSON Schema (${(error as Error).message}).`,
      { cause: error },
    );
  }
}

function sanitizeSchema(
  node: unknown,
  depth: number,
  poisoning: Set<PoisoningKind> | undefined,
): unknown {
  if (depth > 32)
    throw new VeridexError('import_invalid', 'JSON Schema nests deeper than 32 levels.');
  if (typeof node === 'string') return sanitizeSchemaString(node, poisoning);
  if (Array.isArray(node)) return node.map((item) => sanitizeSchema(item, depth + 1, poisoning));
  if (typeof node !== 'object' || node === null) return node;
  const result: Record<string, unknown> = {};
  for (const [rawKey, value] of Object.entries(node)) {
    const key = sanitizedKey(rawKey, result, poisoning);
    if ((key === 'description' || key === 'title') && typeof value === 'string') {
      result[key] = sanitizeImportedText(value, SCHEMA_TEXT_LIMIT, poisoning);
    } else if (key === 'properties' && typeof value === 'object' && value !== null) {
      const properties: Record<string, unknown> = {};
      for (const [name, child] of Object.entries(value)) {
        properties[sanitizedKey(name, properties, poisoning)] = sanitizeSchema(
          child,
          depth + 1,
          poisoning,
        );
      }
      result[key] = properties;
    } else {
      const clean = sanitizeSchema(value, depth + 1, poisoning);
      // Values that differed only in what the sanitiser removed are one value now.
      result[key] = key === 'enum' && Array.isArray(clean) ? withoutRepeats(clean) : clean;
    }
  }
  if (
    result.type === 'object' &&
    !('additionalProperties' in result) &&
    !('patternProperties' in result)
  ) {
    result.additionalProperties = false;
  }
  return result;
}

// Sanitiser findings that change what an imported text says to the model — a description, a
// title or a schema string: invisible text (tag characters, zero-width and bidi characters,
// controls, terminal escapes) and role tokens.
const HOLDING_FINDINGS: Readonly<Record<string, PoisoningKind | undefined>> = {
  hidden_unicode: 'invisible_text',
  control_character: 'invisible_text',
  terminal_escape: 'invisible_text',
  invalid_unicode: 'invisible_text',
  role_token: 'role_token',
};

// The poisoning kinds of the sanitiser's findings that hold a tool (see HOLDING_FINDINGS).
function addHoldingFindings(
  findings: readonly SanitizerFinding[],
  poisoning: Set<PoisoningKind>,
): void {
  for (const finding of findings) {
    const kind = HOLDING_FINDINGS[finding.kind];
    if (kind) poisoning.add(kind);
  }
}

/**
 * A string of an imported schema other than a description or title — a property name, an
 * `enum`, `const`, `default` or `examples` value, a `pattern`, an extension keyword — as the
 * model may read it: through the output sanitiser, uncut. These strings are the tool's
 * contract as well as text, so a change the sanitiser had to make to one (invisible text, a
 * role token) also holds the tool for review (`invisible_text`, `role_token` in `poisoning`):
 * the server declared a value other than the one the model is shown.
 */
function sanitizeSchemaString(text: string, poisoning: Set<PoisoningKind> | undefined): string {
  const { content, findings } = sanitizeOutput(text, { maxBytes: SCHEMA_SIZE_LIMIT * 4 });
  if (content === text || !poisoning) return content;
  addHoldingFindings(findings, poisoning);
  // What the removed text said (tag characters spell ASCII): the tool's view no longer holds it.
  for (const kind of scanToolPoisoning(text).findings) poisoning.add(kind);
  return content;
}

// A key of `record` sanitised; two keys that sanitise to one would silently merge, so refuse.
function sanitizedKey(
  key: string,
  record: Record<string, unknown>,
  poisoning: Set<PoisoningKind> | undefined,
): string {
  const clean = sanitizeSchemaString(key, poisoning);
  if (clean !== key && Object.hasOwn(record, clean)) {
    throw new VeridexError(
      'import_invalid',
      `JSON Schema names ${JSON.stringify(clean).slice(0, 80)} twice once hidden characters and role tokens are removed.`,
    );
  }
  return clean;
}

function withoutRepeats(values: unknown[]): unknown[] {
  const seen = new Set<string>();
  return values.filter((value) => {
    if (typeof value !== 'string') return true;
    if (seen.has(value)) return false;
    seen.add(value);
    return true;
  });
}

const ORDER = SAFETY_CLASSES;

/** The stricter of two safety classes. */
export function stricterClass(a: SafetyClass, b: SafetyClass): SafetyClass {
  return ORDER.indexOf(a) >= ORDER.indexOf(b) ? a : b;
}

/**
 * MCP-style annotations of an imported tool, kept only as the known fields with the right
 * types (titles sanitised). They are pinned with the tool; they can raise its safety class
 * (`destructiveHint: true` → at least `write`) but never lower it.
 */
export function importedAnnotations(
  raw: unknown,
  poisoning?: Set<PoisoningKind>,
): ToolAnnotations | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const record = raw as Record<string, unknown>;
  const annotations: ToolAnnotations = {};
  if (typeof record.title === 'string')
    annotations.title = sanitizeImportedText(record.title, SCHEMA_TEXT_LIMIT, poisoning);
  for (const hint of [
    'readOnlyHint',
    'destructiveHint',
    'idempotentHint',
    'openWorldHint',
  ] as const) {
    if (typeof record[hint] === 'boolean') annotations[hint] = record[hint];
  }
  return Object.keys(annotations).length === 0 ? undefined : annotations;
}

/** The class of an imported tool: the one given, raised (never lowered) by its annotations. */
export function classWithAnnotations(
  given: SafetyClass,
  annotations: ToolAnnotations | undefined,
): SafetyClass {
  if (!SAFETY_CLASSES.includes(given)) {
    throw new VeridexError(
      'config_invalid',
      `safetyClass must be one of ${SAFETY_CLASSES.join(', ')}; got ${String(given)}.`,
    );
  }
  return annotations?.destructiveHint === true ? stricterClass(given, 'write') : given;
}
