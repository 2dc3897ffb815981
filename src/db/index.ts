export { createDatabase } from './create-database.js';
export type { Database, Queryable, QueryOptions, TransactionOptions } from './database.js';
export {
  type CreateDatabaseOptions,
  type DatabaseTarget,
  DEFAULT_PGLITE_DIR,
  resolveDatabaseTarget,
} from './database-options.js';
export { isConnectionError, isUniqueViolation, toDatabaseError } from './db-errors.js';
export { listMigrations, type MigrateResult, type Migration, migrate } from './migrate.js';
export type { ExposeOption } from './pglite-socket.js';
