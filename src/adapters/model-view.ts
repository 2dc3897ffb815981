import type { AnyGovernedTool, ToolReview } from '../tools/types.js';
import { type PoisoningKind, scanModelView } from './tool-poisoning.js';

/** What a model is shown of one imported tool (the parts an importer builds it from). */
export interface ModelView {
  name: string;
  title?: string | undefined;
  description: string;
  /** JSON Schemas as the model receives them (`tool.jsonSchema.input`, then output if any). */
  schemas: readonly unknown[];
}

/**
 * The view of a governed tool as it stands: its name, title, description and both JSON
 * Schemas, as a model is shown them (an output schema of a plain string shows no text).
 */
export function modelViewOf(tool: AnyGovernedTool): ModelView {
  return {
    name: tool.name,
    title: tool.annotations?.title,
    description: tool.description,
    schemas: [tool.jsonSchema.input, tool.jsonSchema.output],
  };
}

// JSON Schema (2020-12, and OpenAPI's additions) keywords: their names are the vocabulary, not
// the document's words. Any other key is model-visible text (`x-note`, a property name).
const KEYWORDS = new Set([
  '$anchor',
  '$comment',
  '$defs',
  '$dynamicAnchor',
  '$dynamicRef',
  '$id',
  '$ref',
  '$schema',
  '$vocabulary',
  'additionalItems',
  'additionalProperties',
  'allOf',
  'anyOf',
  'const',
  'contains',
  'contentEncoding',
  'contentMediaType',
  'contentSchema',
  'default',
  'definitions',
  'dependentRequired',
  'dependentSchemas',
  'deprecated',
  'description',
  'else',
  'enum',
  'examples',
  'exclusiveMaximum',
  'exclusiveMinimum',
  'format',
  'if',
  'items',
  'maxContains',
  'maximum',
  'maxItems',
  'maxLength',
  'maxProperties',
  'minContains',
  'minimum',
  'minItems',
  'minLength',
  'minProperties',
  'multipleOf',
  'not',
  'nullable',
  'oneOf',
  'pattern',
  'patternProperties',
  'prefixItems',
  'propertyNames',
  'readOnly',
  'required',
  'then',
  'title',
  'type',
  'unevaluatedItems',
  'unevaluatedProperties',
  'uniqueItems',
  'writeOnly',
]);

// Keywords whose value maps names (model-visible) to subschemas.
const NAMED_SCHEMAS = new Set([
  'properties',
  'patternProperties',
  '$defs',
  'definitions',
  'dependentSchemas',
]);

// Values that are the schema language itself (zod writes them), skipped only when they are.
const TYPE_NAMES = new Set(['string', 'number', 'integer', 'boolean', 'object', 'array', 'null']);
const isVocabulary = (key: string, value: unknown): boolean =>
  (key === 'type' &&
    (Array.isArray(value) ? value : [value]).every((name) => TYPE_NAMES.has(name as string))) ||
  (key === '$schema' &&
    typeof value === 'string' &&
    value.startsWith('https://json-schema.org/draft/') &&
    !value.includes(' '));

/**
 * Every string of an imported tool a model reads, in the order it reads them: the name, the
 * title, the description, then each schema as its JSON text runs — property names, titles,
 * descriptions, `enum`/`const`/`default`/`examples` values (their keys too), `format`,
 * `pattern`, extension keywords and their values, at any depth. Keyword names, JSON type names
 * and zod's `$schema` URL are left out: they are the schema language, and between two parts of
 * a split sentence they would only pad it.
 *
 * Linear in the size of the schemas (each node visited once; importers cap schema size and
 * depth before this runs).
 */
export function modelVisibleStrings(view: ModelView): string[] {
  const parts = [view.name];
  if (view.title) parts.push(view.title);
  parts.push(view.description);
  for (const schema of view.schemas) schemaStrings(schema, parts);
  return parts;
}

function schemaStrings(node: unknown, parts: string[]): void {
  if (Array.isArray(node)) {
    for (const item of node) schemaStrings(item, parts);
    return;
  }
  if (typeof node === 'string') {
    parts.push(node);
    return;
  }
  if (typeof node !== 'object' || node === null) return;
  for (const [key, value] of Object.entries(node)) {
    if (!KEYWORDS.has(key) && !NAMED_SCHEMAS.has(key)) {
      // An extension keyword (`x-instructions`): its name and all it holds are text.
      parts.push(key);
      dataStrings(value, parts);
    } else if (NAMED_SCHEMAS.has(key) && isRecord(value)) {
      for (const [name, child] of Object.entries(value)) {
        parts.push(name);
        schemaStrings(child, parts);
      }
    } else if (key === 'enum' || key === 'const' || key === 'default' || key === 'examples') {
      dataStrings(value, parts);
    } else if (!isVocabulary(key, value)) {
      schemaStrings(value, parts);
    }
  }
}

// An instance value shown in a schema: every key and every string of it.
function dataStrings(value: unknown, parts: string[]): void {
  if (typeof value === 'string') parts.push(value);
  else if (Array.isArray(value)) for (const item of value) dataStrings(item, parts);
  else if (isRecord(value)) {
    for (const [key, child] of Object.entries(value)) {
      parts.push(key);
      dataStrings(child, parts);
    }
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The review hold of an imported tool: the kinds already found while its texts were cleaned
 * (`poisoning`), plus those {@link scanModelView} finds in everything the model reads of it
 * as a whole — so an instruction in an enum value, a property name or the tool's name, or a
 * sentence split between two fields, holds the tool too. `undefined` when nothing was found.
 */
export function importedToolReview(
  view: ModelView,
  poisoning: ReadonlySet<PoisoningKind>,
): ToolReview | undefined {
  const kinds = new Set([...poisoning, ...scanModelView(modelVisibleStrings(view))]);
  return kinds.size > 0 ? { state: 'review_required', reasons: [...kinds].sort() } : undefined;
}
