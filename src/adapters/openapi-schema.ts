import { VeridexError } from '../errors/index.js';

/** Most schema nodes one operation's input may expand to (after `$ref`s are inlined). */
export const MAX_OPERATION_SCHEMA_NODES = 20_000;

// Keywords of the OpenAPI Schema Object that are not JSON Schema validation (or that 3.0 spells
// differently): dropped before zod reads the schema.
const OPENAPI_ONLY = new Set(['discriminator', 'xml', 'externalDocs', 'example', 'nullable']);

/** Thrown for an operation whose schema cannot become a tool input; the operation is skipped. */
export class UnusableSchemaError extends Error {}

/**
 * A JSON Schema (2020-12) copy of a dereferenced OpenAPI 3.0 or 3.1 schema, fit for a tool's
 * input: 3.0's `nullable` and boolean `exclusiveMinimum`/`exclusiveMaximum` rewritten, OpenAPI-only
 * keywords dropped, `readOnly` properties removed (a client never sends them).
 *
 * The walk is bounded: a dereferenced document is a graph whose shared nodes a naive copy
 * would expand exponentially ("billion laughs" through `$ref`s or YAML aliases), so it stops
 * after `budget.nodes` nodes. A `$ref` still present (circular, or external and not followed)
 * cannot be inlined either.
 *
 * @throws UnusableSchemaError for leftover `$ref`s, cycles or an exhausted budget.
 */
export function toInputJsonSchema(
  schema: unknown,
  openapi30: boolean,
  budget: { nodes: number } = { nodes: MAX_OPERATION_SCHEMA_NODES },
  ancestors: Set<object> = new Set(),
): unknown {
  if (--budget.nodes < 0) {
    throw new UnusableSchemaError(
      `its schemas expand to more than ${MAX_OPERATION_SCHEMA_NODES} nodes`,
    );
  }
  if (Array.isArray(schema)) {
    return schema.map((item) => toInputJsonSchema(item, openapi30, budget, ancestors));
  }
  if (typeof schema !== 'object' || schema === null) return schema;
  if (ancestors.has(schema)) throw new UnusableSchemaError('its schema is recursive');
  const node = schema as Record<string, unknown>;
  if (typeof node.$ref === 'string') {
    throw new UnusableSchemaError(
      `its schema keeps a $ref (${node.$ref.slice(0, 80)}) that is recursive or external`,
    );
  }
  ancestors.add(schema);
  try {
    const result: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(node)) {
      if (OPENAPI_ONLY.has(key)) continue;
      if (key === 'properties' && typeof value === 'object' && value !== null) {
        result.properties = writableProperties(
          value as Record<string, unknown>,
          openapi30,
          budget,
          ancestors,
        );
      } else if (openapi30 && (key === 'exclusiveMinimum' || key === 'exclusiveMaximum')) {
        // 3.0 (draft 4): a boolean modifying minimum/maximum; 2020-12: the bound itself.
        const bound = key === 'exclusiveMinimum' ? node.minimum : node.maximum;
        if (value === true && typeof bound === 'number') result[key] = bound;
      } else {
        result[key] = toInputJsonSchema(value, openapi30, budget, ancestors);
      }
    }
    if (Array.isArray(result.required) && result.properties) {
      const kept = result.properties as Record<string, unknown>;
      result.required = (result.required as unknown[]).filter(
        (name) => typeof name === 'string' && name in kept,
      );
    }
    if (openapi30 && result.exclusiveMinimum !== undefined) delete result.minimum;
    if (openapi30 && result.exclusiveMaximum !== undefined) delete result.maximum;
    return openapi30 && node.nullable === true ? nullable(result) : result;
  } finally {
    ancestors.delete(schema);
  }
}

function writableProperties(
  properties: Record<string, unknown>,
  openapi30: boolean,
  budget: { nodes: number },
  ancestors: Set<object>,
): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  for (const [name, property] of Object.entries(properties)) {
    if ((property as { readOnly?: unknown } | null)?.readOnly === true) continue;
    result[name] = toInputJsonSchema(property, openapi30, budget, ancestors);
  }
  return result;
}

// 3.0's `nullable: true` is 3.1's `null` in the type list (or one more alternative).
function nullable(schema: Record<string, unknown>): Record<string, unknown> {
  if (typeof schema.type === 'string') return { ...schema, type: [schema.type, 'null'] };
  if (Array.isArray(schema.type))
    return { ...schema, type: [...new Set([...schema.type, 'null'])] };
  if (Array.isArray(schema.enum)) return { ...schema, enum: [...schema.enum, null] };
  return { anyOf: [schema, { type: 'null' }] };
}

/**
 * The size of a parsed document with every internal `$ref` expanded, computed in linear time
 * (each object is sized once and shared sizes are added, not re-walked) and capped at `limit`.
 * Small documents can be huge once expanded — YAML aliases nesting copies of copies, or
 * schemas referencing schemas twice per level, directly or through chains of one-hop `$ref`s
 * (`R = { $ref: S }`) — and validators walk the expansion, so such a document is refused before
 * any library sees it. A `$ref` whose target is a `$ref` is followed to its end (each hop
 * counted, a visited set stopping loops); a `$ref` cycle counts once.
 *
 * @throws VeridexError `import_too_large` above `limit` nodes or 256 levels of nesting;
 *   `import_invalid` for a `$ref` chain that loops or a pointer that cannot be decoded.
 */
export function assertExpandedSize(document: unknown, limit: number): void {
  const sizes = new Map<object, number>();
  const active = new Set<object>();
  const targets = new Map<object, { target: unknown; hops: number }>();
  const refuse = (why: string, code: 'import_too_large' | 'import_invalid'): never => {
    throw new VeridexError(code, `The OpenAPI document ${why}; refusing to process it.`, {
      details: { limit },
    });
  };
  // Where a `$ref` node finally points (through any chain), remembered per node: linear.
  const targetOf = (node: object): { target: unknown; hops: number } => {
    const known = targets.get(node);
    if (known) return known;
    const seen = new Set<object>();
    let current: unknown = node;
    let hops = 0;
    while (typeof current === 'object' && current !== null) {
      const ref = (current as { $ref?: unknown }).$ref;
      if (typeof ref !== 'string') break;
      if (seen.has(current))
        refuse(`has a $ref chain that loops (${ref.slice(0, 80)})`, 'import_invalid');
      seen.add(current);
      const cached = current !== node ? targets.get(current) : undefined;
      if (cached) {
        hops += cached.hops;
        current = cached.target;
        break;
      }
      current = resolvePointer(document, ref, refuse);
      hops++;
    }
    const result = { target: current, hops };
    targets.set(node, result);
    return result;
  };
  const sizeOf = (node: unknown, depth: number): number => {
    if (typeof node !== 'object' || node === null) return 1;
    if (depth > 256) refuse('nests deeper than 256 levels', 'import_too_large');
    let extra = 0;
    let target: unknown = node;
    if (typeof (node as { $ref?: unknown }).$ref === 'string') {
      ({ target, hops: extra } = targetOf(node));
    }
    if (typeof target !== 'object' || target === null) return 1 + extra;
    const known = sizes.get(target);
    if (known !== undefined) return known + extra;
    if (active.has(target)) return 1 + extra;
    active.add(target);
    let size = 1;
    for (const child of Object.values(target)) {
      size += sizeOf(child, depth + 1);
      if (size + extra > limit) {
        refuse(
          `expands to more than ${limit} nodes ($refs, chains of $refs or YAML aliases nesting copies)`,
          'import_too_large',
        );
      }
    }
    active.delete(target);
    sizes.set(target, size);
    return size + extra;
  };
  if (sizeOf(document, 0) > limit) {
    refuse(`expands to more than ${limit} nodes`, 'import_too_large');
  }
}

// An internal JSON pointer (`#/components/schemas/Ticket`); anything else resolves to nothing.
function resolvePointer(
  document: unknown,
  ref: string,
  refuse: (why: string, code: 'import_invalid') => never,
): unknown {
  if (!ref.startsWith('#')) return undefined;
  let node = document;
  for (const raw of ref.slice(1).split('/').slice(1)) {
    let decoded: string;
    try {
      decoded = decodeURIComponent(raw);
    } catch {
      return refuse(
        `has a $ref that is not a valid pointer (${ref.slice(0, 80)})`,
        'import_invalid',
      );
    }
    const key = decoded.replace(/~1/g, '/').replace(/~0/g, '~');
    if (typeof node !== 'object' || node === null || !Object.hasOwn(node, key)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}
