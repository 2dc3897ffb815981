import { VeridexError } from '../errors/index.js';
import { linearPatternRefusal } from './linear-pattern.js';
import { assertExpansionBounded } from './schema-expansion.js';

/** Work units every pattern check of one schema may spend together (about 0.2 s). */
const SCHEMA_PATTERN_WORK_LIMIT = 2_000_000;

// Keywords whose value is a schema or a list of them, and keywords mapping names to schemas
// (zod's `from-json-schema` walks the same). Any other keyword but the instance data below is
// walked as a schema too: a pattern found where zod would not compile it costs a check, never
// a miss.
const SCHEMA_MAPS = new Set([
  'properties',
  'patternProperties',
  'dependentSchemas',
  'dependencies',
  '$defs',
  'definitions',
]);
const INSTANCE_DATA = new Set(['default', 'examples', 'example', 'enum', 'const']);

/**
 * The checks an imported JSON Schema passes after it is sanitised and before `z.fromJSONSchema`
 * reads it, for every importer (MCP, OpenAPI, LangChain, OpenAI functions, OpenAI Agents):
 *
 * - its size with every `$ref` written out is bounded (`assertExpansionBounded`), since every
 *   rendering of the tool's schema writes shared definitions out in full;
 * - every `pattern` and every `patternProperties` key (also under `propertyNames`, `items`,
 *   `$defs`, … at any depth) is proven to match in linear time (`linearPatternRefusal`): zod
 *   compiles them into ordinary regular expressions that run on each call's arguments in the
 *   agent's process, before policy, where one that backtracks (`^(a+)+$`) holds the event loop.
 *
 * @throws VeridexError `import_invalid` naming the tool, the keyword and where it is;
 *   `import_too_large` for a schema too large once expanded or too costly to check.
 */
export function assertImportableSchema(schema: unknown, where: string): void {
  assertExpansionBounded(schema, where);
  let work = 0;
  const check = (pattern: unknown, keyword: string, path: string) => {
    const text = String(pattern); // what `new RegExp(pattern)` compiles
    const verdict = linearPatternRefusal(text);
    work += verdict.work;
    if (verdict.refusal) {
      throw new VeridexError(
        'import_invalid',
        `${where}: the ${keyword} ${JSON.stringify(text.slice(0, 80))} at ${path || '/'} is refused: ${verdict.refusal}. Imported patterns run on every call's arguments, so each must be provably linear-time; leave the tool out of the import or have its pattern anchored and unambiguous.`,
        { details: { where, keyword, path, reason: verdict.refusal } },
      );
    }
    if (work > SCHEMA_PATTERN_WORK_LIMIT) {
      throw new VeridexError(
        'import_too_large',
        `${where}: JSON Schema patterns take too long to check; refusing it.`,
        { details: { where, limit: SCHEMA_PATTERN_WORK_LIMIT } },
      );
    }
  };
  const walk = (node: unknown, path: string): void => {
    if (Array.isArray(node)) {
      for (const [index, item] of node.entries()) walk(item, `${path}/${index}`);
      return;
    }
    if (typeof node !== 'object' || node === null) return;
    for (const [key, value] of Object.entries(node)) {
      const at = `${path}/${pointerSegment(key)}`;
      if (key === 'pattern' && value) check(value, 'pattern', at);
      if (INSTANCE_DATA.has(key)) continue;
      if (SCHEMA_MAPS.has(key) && typeof value === 'object' && value !== null) {
        for (const [name, child] of Object.entries(value)) {
          const childAt = `${at}/${pointerSegment(name)}`;
          if (key === 'patternProperties') check(name, 'patternProperties key', childAt);
          walk(child, childAt);
        }
      } else if (key !== 'pattern') {
        walk(value, at);
      }
    }
  };
  walk(schema, '');
}

function pointerSegment(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}
