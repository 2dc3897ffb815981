import { VeridexError } from '../errors/index.js';

/**
 * Checks a schema name as PostgreSQL accepts it (README "Database"): 1–63 bytes, no NUL, not in
 * the reserved `pg_` namespace. Any other character — a hyphen, a space, a quote, upper case —
 * is allowed, because every use quotes it ({@link quoteIdentifier}); `PostgresSaver` users with
 * a schema such as `custom-schema` swap in this checkpointer unchanged.
 * @throws VeridexError `config_invalid`.
 */
export function checkSchemaName(schema: string): void {
  const bytes = Buffer.byteLength(schema, 'utf8');
  if (bytes === 0 || bytes > 63 || schema.includes('\u0000') || /^pg_/i.test(schema)) {
    throw new VeridexError(
      'config_invalid',
      `Schema name "${schema.slice(0, 80)}" is not allowed: PostgreSQL needs 1 to 63 bytes, no NUL character, and reserves names starting with pg_.`,
    );
  }
}

/** `name` as a quoted SQL identifier: in double quotes, each double quote doubled. */
export function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/**
 * The libpq `options` that make `schema` a connection's whole `search_path`: libpq splits
 * options on spaces and reads backslash escapes, so both are escaped.
 */
export function searchPathOption(schema: string): string {
  const value = quoteIdentifier(schema).replaceAll('\\', '\\\\').replaceAll(' ', '\\ ');
  return `-c search_path=${value}`;
}
