import { z } from 'zod';
import { canonicalJson } from '../audit/canonical-json.js';

/** A JSON Schema document as produced by zod 4's `z.toJSONSchema`. */
export type JsonSchema = Readonly<Record<string, unknown>>;

/** Which side of a schema to render: what it accepts (`input`) or what it produces (`output`). */
export type SchemaSide = 'input' | 'output';

interface RenderedSchema {
  schema: JsonSchema;
  /** RFC 8785 text of `schema`, kept so the pin check per call costs one hash, not a render. */
  canonical: string;
  /** Every schema node the rendering visited, with the registry metadata it read for it. */
  metadata: ReadonlyArray<NodeMetadata>;
}

interface NodeMetadata {
  node: object;
  value: unknown;
  /** JSON of `value` when rendered: a metadata object edited in place is noticed too. */
  text: string;
}

// Rendering a zod schema costs hundreds of microseconds; the pin check runs before every call,
// so renderings are cached per schema object. zod 4 schemas are immutable (every method
// returns a new instance), but what they render to is not: descriptions and other metadata
// live in `z.globalRegistry`, which anyone can change for an existing schema in place
// (`z.globalRegistry.add(schema, { description: '…' })`). So each cached rendering keeps the
// metadata of every node it visited, and is re-rendered as soon as any of it differs.
const cache = new WeakMap<z.ZodType, Partial<Record<SchemaSide, RenderedSchema>>>();

/**
 * The JSON Schema of a zod schema, rendered once per schema object and side with zod 4's own
 * `z.toJSONSchema` (types zod cannot express, e.g. `z.date()`, render as `{}`), deep-frozen.
 *
 * @example jsonSchemaOf(z.object({ city: z.string() }), 'input') // { type: 'object', ... }
 */
export function jsonSchemaOf(schema: z.ZodType, side: SchemaSide): JsonSchema {
  return rendered(schema, side).schema;
}

/** The RFC 8785 canonical JSON text of {@link jsonSchemaOf}, cached the same way. */
export function canonicalJsonSchemaOf(schema: z.ZodType, side: SchemaSide): string {
  return rendered(schema, side).canonical;
}

function rendered(schema: z.ZodType, side: SchemaSide): RenderedSchema {
  let entry = cache.get(schema);
  if (entry === undefined) {
    entry = {};
    cache.set(schema, entry);
  }
  let result = entry[side];
  if (result === undefined || !metadataUnchanged(result.metadata)) {
    const visited: object[] = [];
    const json = z.toJSONSchema(schema, {
      io: side,
      unrepresentable: 'any',
      cycles: 'ref',
      override: (context) => {
        visited.push(context.zodSchema);
      },
    });
    const metadata = [...new Set(visited)].map((node) => {
      const value = z.globalRegistry.get(node as z.ZodType);
      return { node, value, text: metadataText(value) };
    });
    result = { schema: deepFreeze(json) as JsonSchema, canonical: canonicalJson(json), metadata };
    entry[side] = result;
  }
  return result;
}

function metadataUnchanged(metadata: ReadonlyArray<NodeMetadata>): boolean {
  for (const { node, value, text } of metadata) {
    // By content: `get` returns a fresh merged copy for schemas derived from another
    // (`.describe()`), so identity would never match; opaque values compare by identity.
    const current = z.globalRegistry.get(node as z.ZodType);
    if (metadataText(current) !== text || (text === OPAQUE && current !== value)) return false;
  }
  return true;
}

const OPAQUE = '\u0000opaque';

function metadataText(value: unknown): string {
  if (value === undefined) return '';
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    // Not JSON (a cycle, a BigInt): compared by identity only.
    return OPAQUE;
  }
}

/** Freezes `value` and everything reachable from it; returns it. */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

// Keywords that only annotate; a schema made of nothing else constrains nothing.
const ANNOTATIONS = new Set([
  '$schema',
  '$id',
  '$comment',
  '$defs',
  'definitions',
  'title',
  'description',
  'default',
  'examples',
  'deprecated',
  'readOnly',
  'writeOnly',
  'id',
]);

const ALL_TYPES = ['array', 'boolean', 'null', 'number', 'object', 'string'];

/**
 * True when `schema` accepts every JSON value: `{}`, `true`, a schema made only of
 * annotations, a type list naming every type without further constraints, or a combinator
 * whose branches make it accept everything (`anyOf`/`oneOf` with an accept-all branch,
 * `allOf` of accept-all schemas).
 */
export function acceptsEverything(schema: unknown): boolean {
  if (schema === true) return true;
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return false;
  const entries = Object.entries(schema).filter(([key]) => !ANNOTATIONS.has(key));
  if (entries.length === 0) return true;
  const record = schema as Record<string, unknown>;
  if (entries.length === 1) {
    const [key, value] = entries[0]!;
    if (key === 'anyOf' && Array.isArray(value)) return value.some(acceptsEverything);
    if (key === 'oneOf' && Array.isArray(value)) return value.some(acceptsEverything);
    if (key === 'allOf' && Array.isArray(value)) return value.every(acceptsEverything);
    if (key === 'type' && Array.isArray(record.type)) {
      const types = new Set(record.type.map((type) => (type === 'integer' ? 'number' : type)));
      return ALL_TYPES.every((type) => types.has(type));
    }
  }
  return false;
}

// Property names are always strings: `{ type: 'string' }` alone constrains nothing.
function isVacuousNameSchema(schema: unknown): boolean {
  if (acceptsEverything(schema)) return true;
  const keys = Object.keys(schema as object).filter((key) => !ANNOTATIONS.has(key));
  return keys.length === 1 && (schema as Record<string, unknown>).type === 'string';
}

/**
 * True when `schema` is an object schema that constrains nothing about the object: no
 * properties, no required keys, and additional properties unconstrained. For tool arguments
 * (always objects) that is the same as accepting anything.
 */
export function acceptsEveryObject(schema: JsonSchema): boolean {
  if (schema.type !== 'object') return false;
  const constraining = Object.keys(schema).filter(
    (key) =>
      !ANNOTATIONS.has(key) &&
      key !== 'type' &&
      key !== 'additionalProperties' &&
      !(key === 'propertyNames' && isVacuousNameSchema(schema.propertyNames)),
  );
  const properties = schema.properties as Record<string, unknown> | undefined;
  const noProperties = properties === undefined || Object.keys(properties).length === 0;
  const onlyEmptyProperties = constraining.every((key) => key === 'properties') && noProperties;
  return (
    onlyEmptyProperties &&
    (schema.additionalProperties === undefined || acceptsEverything(schema.additionalProperties))
  );
}
