import { VeridexError } from '../errors/index.js';

const NETWORK_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);

// SQLSTATEs that mean no session could be had, rather than a statement failing: the server is
// shutting down or ended this backend (57P01-57P03), the database does not exist (3D000), the
// role is unknown or was refused (28000, 28P01), or the server is full (53300).
const SERVER_GONE_STATES = new Set(['57P01', '57P02', '57P03', '3D000', '28000', '28P01', '53300']);

const CONNECTION_MESSAGES =
  /Connection terminated|terminating connection|connection error|Client was closed|timeout exceeded when trying to connect|Cannot use a pool after calling end/i;

/** Where a database handle points, for error messages. Never includes a password. */
export interface DatabaseLocation {
  kind: 'postgres' | 'pglite';
  where: string;
  /** Said after a connection failure, e.g. that the URL names no user. */
  hint?: string;
}

/** True when `error` means the connection (not the statement) failed. */
export function isConnectionError(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (NETWORK_ERROR_CODES.has(code) || SERVER_GONE_STATES.has(code) || code.startsWith('08')) {
      return true;
    }
  }
  const message = (error as { message?: unknown }).message;
  return typeof message === 'string' && CONNECTION_MESSAGES.test(message);
}

/**
 * Maps a node-postgres error to a {@link VeridexError}: `db_unavailable` for connection
 * failures (with what to check), `db_query_failed` for SQL errors (SQLSTATE in details).
 * Statement parameters are never included: they may hold secrets.
 */
export function toDatabaseError(error: unknown, location: DatabaseLocation): VeridexError {
  if (VeridexError.is(error)) return error;
  const message = error instanceof Error ? error.message : String(error);
  if (isConnectionError(error)) {
    const hint =
      location.hint ??
      (location.kind === 'postgres'
        ? 'Check that PostgreSQL is running and reachable, and that DATABASE_URL (host, port, user, database) is right.'
        : 'Check that the PGlite data directory exists, is writable and is not open in another process.');
    return new VeridexError(
      'db_unavailable',
      `Database at ${location.where} is unavailable (${message}). ${hint}`,
      { cause: error, details: { where: location.where, kind: location.kind } },
    );
  }
  const pgError = error as { code?: string; constraint?: string; table?: string };
  return new VeridexError('db_query_failed', `Database query failed: ${message}`, {
    cause: error,
    details: {
      sqlState: pgError.code,
      constraint: pgError.constraint,
      table: pgError.table,
    },
  });
}

/** True when `error` is a `db_query_failed` for a unique-constraint violation (SQLSTATE 23505). */
export function isUniqueViolation(error: unknown): boolean {
  return VeridexError.is(error, 'db_query_failed') && error.details.sqlState === '23505';
}
