import { VeridexError } from '../errors/index.js';

/**
 * Most characters of JSON an imported JSON Schema may come to with every `$ref` written out —
 * five times the 100,000-byte limit on the schema as sent.
 */
export const MAX_EXPANDED_SCHEMA_CHARACTERS = 500_000;
const MAX_REF_DEPTH = 512;

/**
 * Refuses an imported JSON Schema whose `$ref`s would expand it past
 * {@link MAX_EXPANDED_SCHEMA_CHARACTERS}. `z.fromJSONSchema` turns each definition into one
 * shared zod schema, but every rendering of the tool's schema (`z.toJSONSchema`, for the pin,
 * the model and `tool.jsonSchema`) writes each use out in full, so `$defs` whose every entry
 * names the one before twice double at each level: 40 levels in 3 KB render to terabytes.
 *
 * The size is counted in one pass, linear in the document: each object is sized once and a
 * `$ref`'s size is its target's, added rather than walked again, saturating at the limit. A
 * `$ref` is followed as `z.fromJSONSchema` follows it (`#` is the root; `#/$defs/<name>` and
 * `#/definitions/<name>` name a root definition); a reference back into a definition being
 * sized counts as itself (zod renders cycles as `$ref`s). A schema declaring both `$defs` and
 * `definitions` is refused, so the two cannot disagree on what a name means.
 *
 * @throws VeridexError `import_too_large` past the limit or 512 levels of references;
 *   `import_invalid` for both definition tables.
 */
export function assertExpansionBounded(schema: unknown, where: string): void {
  const root = schema as Record<string, unknown>;
  if (isObject(root.$defs) && isObject(root.definitions)) {
    throw new VeridexError(
      'import_invalid',
      `${where}: JSON Schema declares both $defs and definitions; use one.`,
      { details: { where } },
    );
  }
  const table = (root.$defs || root.definitions) as unknown;
  const limit = MAX_EXPANDED_SCHEMA_CHARACTERS;
  const sizes = new Map<object, number>();
  const active = new Set<object>();
  const tooLarge = (why: string): never => {
    throw new VeridexError('import_too_large', `${where}: JSON Schema ${why}; refusing it.`, {
      details: { where, limit },
    });
  };

  const sizeOf = (node: unknown, depth: number): number => {
    if (typeof node === 'string') return node.length + 2;
    if (typeof node !== 'object' || node === null) return String(node).length;
    const known = sizes.get(node);
    if (known !== undefined) return known;
    if (active.has(node)) return 1;
    if (depth > MAX_REF_DEPTH)
      tooLarge(`nests deeper than ${MAX_REF_DEPTH} levels with its $refs followed`);
    active.add(node);
    let size = 2;
    for (const [key, value] of Object.entries(node)) {
      size += (Array.isArray(node) ? 1 : key.length + 4) + sizeOf(value, depth + 1);
      if (key === '$ref' && !Array.isArray(node) && value) {
        size += sizeOf(resolve(root, table, value), depth + 1);
      }
      if (size > limit) {
        tooLarge(`expands to more than ${limit} characters with its $refs written out`);
      }
    }
    active.delete(node);
    sizes.set(node, size);
    return size;
  };
  sizeOf(schema, 0);
}

// Where `z.fromJSONSchema` (zod 4.x `resolveRef`) looks a `$ref` up; undefined when it does not.
function resolve(root: object, table: unknown, ref: unknown): unknown {
  if (typeof ref !== 'string' || !ref.startsWith('#')) return undefined;
  const path = ref.slice(1).split('/').filter(Boolean);
  if (path.length === 0) return root;
  if ((path[0] !== '$defs' && path[0] !== 'definitions') || path[1] === undefined) return undefined;
  const name = path[1].replace(/~1/g, '/').replace(/~0/g, '~');
  return isObject(table) && Object.hasOwn(table, name) ? table[name] : undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
