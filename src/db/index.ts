export {
  type CreateDatabaseOptions,
  createDatabase,
  DEFAULT_PGLITE_DIR,
} from './create-database.js';
export type { Database, Queryable, QueryOptions, TransactionOptions } from './database.js';
export { isConnectionError, isUniqueViolation, toDatabaseError } from './db-errors.js';
export { listMigrations, type MigrateResult, type Migration, migrate } from './migrate.js';
