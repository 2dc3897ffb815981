import { readFileSync } from 'node:fs';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { VeridexError } from '../errors/index.js';
import { PORTABLE_RUN_FORMAT, type PortableRun } from './portable-run.js';

/**
 * Where the `veridex.run/v1` JSON Schema ships: `schemas/run-v1.schema.json` at the package
 * root (two levels above both `src/adapters/` and `dist/adapters/`).
 */
export const RUN_SCHEMA_URL = new URL('../../schemas/run-v1.schema.json', import.meta.url);

let compiled: ValidateFunction | undefined;

/** The shipped JSON Schema of `veridex.run/v1`, parsed. */
export function runSchema(): Record<string, unknown> {
  return JSON.parse(readFileSync(RUN_SCHEMA_URL, 'utf8')) as Record<string, unknown>;
}

// One definition of the format: the importer validates with the very schema the package
// ships, so the documentation and the check cannot drift apart.
function validator(): ValidateFunction {
  compiled ??= new Ajv2020({ allErrors: false, strict: true }).compile(runSchema());
  return compiled;
}

/**
 * Checks an untrusted document against the `veridex.run/v1` JSON Schema.
 * @throws VeridexError `import_invalid` naming the first offending location.
 */
export function parsePortableRun(document: unknown): PortableRun {
  const validate = validator();
  if (validate(document)) return document as PortableRun;
  const format = (document as { format?: unknown } | null)?.format;
  const issues = (validate.errors ?? [])
    .slice(0, 3)
    .map((issue) => `${issue.instancePath || '(root)'} ${issue.message ?? 'is invalid'}`);
  throw new VeridexError(
    'import_invalid',
    format !== PORTABLE_RUN_FORMAT
      ? `Not a ${PORTABLE_RUN_FORMAT} document (format ${JSON.stringify(format)?.slice(0, 40)}).`
      : `Not a valid ${PORTABLE_RUN_FORMAT} document: ${issues.join('; ')}.`,
  );
}
