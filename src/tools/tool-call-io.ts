import type { z } from 'zod';

/**
 * Parses with `schema` synchronously, or returns `undefined` for a schema with async
 * refinements (then use `schema.safeParseAsync`): `parseSync(schema, value) ??
 * (await schema.safeParseAsync(value))`. Spares the common, synchronous case a promise.
 */
export function parseSync<T extends z.ZodType>(
  schema: T,
  value: unknown,
): z.ZodSafeParseResult<z.output<T>> | undefined {
  try {
    return schema.safeParse(value);
  } catch (error) {
    if (error instanceof Error && /async|Promise/i.test(error.message)) return undefined;
    throw error;
  }
}

/** Raw tool-call arguments: objects as they are, JSON text parsed (unparseable text left as is). */
export function toArguments(raw: unknown): unknown {
  if (typeof raw !== 'string') return raw;
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

/** Splits `{ llmOutput, artifact }` (and nothing else) from a plain output. */
export function splitArtifact(value: unknown): {
  llmOutput: unknown;
  artifact?: unknown;
  hasArtifact: boolean;
} {
  if (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    'llmOutput' in value
  ) {
    if (Object.keys(value).every((key) => key === 'llmOutput' || key === 'artifact')) {
      const record = value as { llmOutput: unknown; artifact?: unknown };
      return {
        llmOutput: record.llmOutput,
        artifact: record.artifact,
        hasArtifact: 'artifact' in record,
      };
    }
  }
  return { llmOutput: value, hasArtifact: false };
}

/** A JSON-safe copy (bigint as `"123n"`), for hashing validated arguments. */
export function toJsonSafe(value: unknown): unknown {
  const text = JSON.stringify(value, (_key, item) =>
    typeof item === 'bigint' ? `${item}n` : item,
  );
  return text === undefined ? null : JSON.parse(text);
}

/** The JSON-safe scalar fields of an error's details (ids, names, counts). */
export function scalarDetails(details: Record<string, unknown>): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(details)) {
    if (value === null || ['string', 'number', 'boolean'].includes(typeof value))
      result[key] = value;
  }
  return result;
}
