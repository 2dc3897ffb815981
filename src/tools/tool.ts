import type { z } from 'zod';
import { VeridexError } from '../errors/index.js';
import { validateHostPattern } from '../sandbox/host-pattern.js';
import { acceptsEveryObject, acceptsEverything, deepFreeze, jsonSchemaOf } from './json-schema.js';
import { schemaHashOf } from './schema-hash.js';
import {
  type GovernedTool,
  SAFETY_CLASSES,
  type ToolDefinition,
  type ToolReview,
  type ToolTrust,
} from './types.js';

/** Tool names the major model APIs accept (OpenAI, Anthropic, Gemini): letters, digits, `_`, `-`. */
export const TOOL_NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/** Longest description `tool()` accepts; imported descriptions are cut to a shorter cap. */
export const MAX_DESCRIPTION_LENGTH = 4096;

const SECRET_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
const ROUTES = ['auto', 'human_required', 'dual_approval', 'policy_pack'];

/**
 * Defines a governed tool: a typed, classified contract whose every field the runtime
 * enforces (see `runTool`). Returns a frozen {@link GovernedTool} with its schema pin
 * (`schemaHash`) and JSON Schemas computed once.
 *
 * Rejected at definition time: an input that is not an object schema or accepts every object
 * (`z.record(z.string(), z.any())`, `z.looseObject({})`), an output that accepts anything
 * (`z.any()`, `z.unknown()`, `z.union([z.string(), z.any()])`), a name models cannot call, an
 * empty description, an unknown safety class, and malformed retry/timeout/allowlist fields.
 *
 * @throws VeridexError `tool_definition_invalid` naming the field and what was expected.
 * @example
 * const weather = tool({
 *   name: 'get_weather', description: 'Current weather for a city.', safetyClass: 'read',
 *   input: z.object({ city: z.string() }), output: z.object({ celsius: z.number() }),
 *   async execute({ input }) { return { celsius: 21 } },
 * });
 */
export function tool<Input extends z.ZodType, Output extends z.ZodType>(
  definition: ToolDefinition<Input, Output>,
): GovernedTool<Input, Output> {
  return createGovernedTool(definition, 'local');
}

/**
 * {@link tool} with an explicit trust label; the converters use it with `'imported'`, and the
 * importers with a `review` hold for tools whose metadata carried poisoning instructions (the
 * hold is not part of the schema pin: accepting it does not change the tool's hash).
 * @throws VeridexError `tool_definition_invalid`.
 */
export function createGovernedTool<Input extends z.ZodType, Output extends z.ZodType>(
  definition: ToolDefinition<Input, Output>,
  trust: ToolTrust,
  review?: ToolReview,
): GovernedTool<Input, Output> {
  validateDefinition(definition as ToolDefinition<z.ZodType, z.ZodType>);
  const fields = deepFreeze({
    name: definition.name,
    description: definition.description,
    safetyClass: definition.safetyClass,
    idempotency: definition.idempotency ?? 'optional',
    trust,
    ...optional('approval', definition.approval && { ...definition.approval }),
    ...optional('retry', definition.retry && { ...definition.retry }),
    ...optional('timeoutMs', definition.timeoutMs),
    ...optional('sandbox', definition.sandbox && copySandbox(definition.sandbox)),
    ...optional('annotations', definition.annotations && structuredClone(definition.annotations)),
    ...optional('secrets', definition.secrets && [...definition.secrets]),
  });
  const governed = {
    kind: 'veridex.tool' as const,
    ...fields,
    input: definition.input,
    output: definition.output,
    execute: definition.execute,
    ...(definition.recover ? { recover: definition.recover } : {}),
    ...(review
      ? {
          review: Object.freeze({
            state: review.state,
            reasons: Object.freeze([...review.reasons]),
          }),
        }
      : {}),
    schemaHash: schemaHashOf({ ...fields, input: definition.input, output: definition.output }),
    jsonSchema: Object.freeze({
      input: jsonSchemaOf(definition.input, 'input') as Record<string, unknown>,
      output: jsonSchemaOf(definition.output, 'output') as Record<string, unknown>,
    }),
  };
  return Object.freeze(governed) as GovernedTool<Input, Output>;
}

/** True when `value` is a governed tool made by {@link tool} (from any copy of this package). */
export function isGovernedTool(value: unknown): value is GovernedTool {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { kind?: unknown }).kind === 'veridex.tool' &&
    typeof (value as { execute?: unknown }).execute === 'function'
  );
}

function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

function copySandbox(sandbox: NonNullable<ToolDefinition<z.ZodType, z.ZodType>['sandbox']>) {
  return {
    ...sandbox,
    ...optional('networkAllowlist', sandbox.networkAllowlist && [...sandbox.networkAllowlist]),
    ...optional('envAllowlist', sandbox.envAllowlist && [...sandbox.envAllowlist]),
  };
}

function invalid(name: unknown, field: string, message: string): never {
  const label = typeof name === 'string' && name.length > 0 ? `"${name}"` : '(unnamed)';
  throw new VeridexError('tool_definition_invalid', `Tool ${label}: ${field} ${message}`, {
    details: { tool: typeof name === 'string' ? name : undefined, field },
  });
}

function isZodSchema(value: unknown): value is z.ZodType {
  return typeof value === 'object' && value !== null && '_zod' in value;
}

function validateDefinition(definition: ToolDefinition<z.ZodType, z.ZodType>): void {
  const { name, description } = definition;
  if (typeof definition !== 'object' || definition === null) {
    invalid(undefined, 'definition', 'must be an object.');
  }
  if (typeof name !== 'string' || !TOOL_NAME_PATTERN.test(name)) {
    invalid(name, 'name', 'must be 1–64 letters, digits, "_" or "-" (what model APIs accept).');
  }
  if (typeof description !== 'string' || description.trim().length === 0) {
    invalid(
      name,
      'description',
      'must be a non-empty string telling the model what the tool does.',
    );
  }
  if (description.length > MAX_DESCRIPTION_LENGTH || !isWellFormed(description)) {
    invalid(
      name,
      'description',
      `must be well-formed text of at most ${MAX_DESCRIPTION_LENGTH} characters.`,
    );
  }
  if (!SAFETY_CLASSES.includes(definition.safetyClass)) {
    invalid(
      name,
      'safetyClass',
      `must be one of ${SAFETY_CLASSES.join(', ')}; got ${String(definition.safetyClass)}.`,
    );
  }
  validateSchemas(definition);
  if (typeof definition.execute !== 'function') invalid(name, 'execute', 'must be a function.');
  if (definition.recover !== undefined && typeof definition.recover !== 'function') {
    invalid(name, 'recover', 'must be a function when given.');
  }
  const { idempotency, retry, timeoutMs, approval, secrets, sandbox, annotations } = definition;
  if (idempotency !== undefined && idempotency !== 'optional' && idempotency !== 'required') {
    invalid(name, 'idempotency', `must be "optional" or "required"; got ${String(idempotency)}.`);
  }
  if (
    retry !== undefined &&
    !(isInteger(retry.attempts, 1, 10) && isInteger(retry.backoffMs, 0, 600_000))
  ) {
    invalid(name, 'retry', 'must be { attempts: 1–10, backoffMs: 0–600000 }.');
  }
  if (timeoutMs !== undefined && !isInteger(timeoutMs, 1, 86_400_000)) {
    invalid(name, 'timeoutMs', 'must be a positive integer number of milliseconds.');
  }
  if (approval !== undefined && !ROUTES.includes(approval.route)) {
    invalid(name, 'approval.route', `must be one of ${ROUTES.join(', ')}.`);
  }
  if (
    secrets !== undefined &&
    !(Array.isArray(secrets) && secrets.every((s) => SECRET_NAME.test(s)))
  ) {
    invalid(name, 'secrets', 'must be a list of secret names like "STRIPE_KEY".');
  }
  for (const pattern of sandbox?.networkAllowlist ?? []) {
    const problem = validateHostPattern(pattern);
    if (problem) invalid(name, 'sandbox.networkAllowlist', problem);
  }
  if (annotations !== undefined) {
    try {
      structuredClone(annotations);
      JSON.stringify(annotations);
    } catch {
      invalid(name, 'annotations', 'must be plain JSON data.');
    }
  }
}

function validateSchemas(definition: ToolDefinition<z.ZodType, z.ZodType>): void {
  const { name, input, output } = definition;
  if (!isZodSchema(input)) invalid(name, 'input', 'must be a zod 4 schema (z.object({...})).');
  if (!isZodSchema(output)) invalid(name, 'output', 'must be a zod 4 schema.');
  const inputSchema = jsonSchemaOf(input, 'input');
  if (inputSchema.type !== 'object') {
    invalid(
      name,
      'input',
      'must be an object schema (z.object({...})): tool-call arguments are always objects.',
    );
  }
  // The produced side tells whether unknown keys survive: z.object({}) strips them (fine, a
  // tool without arguments), z.looseObject({}) and z.record(...) pass anything through.
  if (acceptsEverything(inputSchema) || acceptsEveryObject(jsonSchemaOf(input, 'output'))) {
    invalid(
      name,
      'input',
      'accepts any arguments; declare the fields the tool takes (no z.any(), z.unknown(), open records).',
    );
  }
  // A transform renders as `{}` on the produced side; what it accepts is what gets checked then.
  if (
    acceptsEverything(jsonSchemaOf(output, 'output')) &&
    acceptsEverything(jsonSchemaOf(output, 'input'))
  ) {
    invalid(
      name,
      'output',
      'accepts anything; declare what the tool returns (no z.any() or z.unknown()).',
    );
  }
}

function isInteger(value: unknown, min: number, max: number): boolean {
  return Number.isInteger(value) && (value as number) >= min && (value as number) <= max;
}

function isWellFormed(text: string): boolean {
  return (text as string & { isWellFormed(): boolean }).isWellFormed();
}
