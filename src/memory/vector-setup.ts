import type { Database } from '../db/index.js';
import { VeridexError } from '../errors/index.js';
import {
  addVectorColumn,
  CREATE_VECTOR_EXTENSION,
  FIND_VECTOR_EXTENSION,
  LOCK_SETUP,
  READ_SETTINGS,
  VECTOR_EXTENSION_AVAILABLE,
  type VectorSql,
  vectorSql,
  WRITE_SETTING,
} from './sql.js';

/** How vectors are searched: pgvector in SQL, or stored float arrays with sketches. */
export type VectorMode = 'pgvector' | 'fallback';

/** What the caller asks for: `auto` uses pgvector when the extension exists or can be created. */
export type VectorPreference = 'auto' | VectorMode;

/** The outcome of {@link setupVectors}. */
export interface VectorSetup {
  mode: VectorMode;
  dimensions: number;
  /** pgvector names, in pgvector mode. */
  vector?: VectorSql;
  /** Why this mode (e.g. "pgvector is not installed on this server"). */
  reason: string;
}

/**
 * The conditional setup step of the memory tables: detects pgvector, creates the extension
 * when it is available but not yet created, and adds the `embedding vector(n)` column. The
 * numbered migration cannot do this because the server may lack the extension. The chosen
 * mode and dimensions are recorded in `veridex_memory_settings`, so every process using the
 * schema agrees. Idempotent and safe to run from two processes at once.
 *
 * @throws VeridexError `config_invalid` when the schema was set up with other dimensions or
 *   another mode, or when `pgvector` is required but unavailable.
 */
export async function setupVectors(
  db: Database,
  dimensions: number,
  preference: VectorPreference,
): Promise<VectorSetup> {
  const existing = await readSetup(db);
  if (existing) return checkCompatible(db, existing, dimensions, preference);
  let extensionSchema: string | undefined;
  let reason = 'vectors: "fallback" was requested';
  if (preference !== 'fallback') {
    ({ extensionSchema, reason } = await ensureExtension(db));
    if (!extensionSchema && preference === 'pgvector') {
      throw new VeridexError(
        'config_invalid',
        `pgvector was required (vectors: "pgvector") but ${reason}. Install pgvector on the server (or load @electric-sql/pglite-pgvector into PGlite), or use vectors: "auto".`,
      );
    }
  }
  const mode: VectorMode = extensionSchema ? 'pgvector' : 'fallback';
  const vector = extensionSchema ? vectorSql(extensionSchema) : undefined;
  const raced = await db.transaction(async (tx) => {
    await tx.query(LOCK_SETUP);
    const other = await readSetup(tx);
    if (other) return other;
    if (vector) await tx.query(addVectorColumn(vector, dimensions));
    await tx.query(WRITE_SETTING, ['vector_mode', mode]);
    await tx.query(WRITE_SETTING, ['dimensions', String(dimensions)]);
    return undefined;
  });
  // Another process set the schema up first: its choice stands (checked outside the
  // transaction, because PGlite has a single connection).
  if (raced) return checkCompatible(db, raced, dimensions, preference);
  return { mode, dimensions, ...(vector ? { vector } : {}), reason };
}

async function readSetup(
  db: Pick<Database, 'query'>,
): Promise<{ mode: VectorMode; dimensions: number } | undefined> {
  const { rows } = await db.query<{ name: string; value: string }>(READ_SETTINGS);
  const settings = new Map(rows.map((row) => [row.name, row.value]));
  const mode = settings.get('vector_mode');
  if (mode !== 'pgvector' && mode !== 'fallback') return undefined;
  return { mode, dimensions: Number(settings.get('dimensions')) };
}

async function checkCompatible(
  db: Database,
  stored: { mode: VectorMode; dimensions: number },
  dimensions: number,
  preference: VectorPreference,
): Promise<VectorSetup> {
  if (stored.dimensions !== dimensions) {
    throw new VeridexError(
      'config_invalid',
      `Memory in schema "${db.schema}" holds ${stored.dimensions}-dimensional embeddings, but the embedder produces ${dimensions}. Use the same embedder, or a new schema for the new one.`,
      { details: { expected: stored.dimensions, actual: dimensions } },
    );
  }
  if (preference !== 'auto' && preference !== stored.mode) {
    throw new VeridexError(
      'config_invalid',
      `Memory in schema "${db.schema}" was set up in ${stored.mode} mode; vectors: "${preference}" cannot switch it. Use vectors: "auto" or a new schema.`,
    );
  }
  if (stored.mode === 'fallback') {
    return { ...stored, reason: 'the schema was set up without pgvector' };
  }
  const { rows } = await db.query<{ schema: string }>(FIND_VECTOR_EXTENSION);
  if (!rows[0]) {
    throw new VeridexError(
      'config_invalid',
      `Memory in schema "${db.schema}" was set up with pgvector, but the vector extension is gone. Re-create it (CREATE EXTENSION vector) or load @electric-sql/pglite-pgvector.`,
    );
  }
  return { ...stored, vector: vectorSql(rows[0].schema), reason: 'pgvector is installed' };
}

async function ensureExtension(
  db: Database,
): Promise<{ extensionSchema: string | undefined; reason: string }> {
  const find = async () => (await db.query<{ schema: string }>(FIND_VECTOR_EXTENSION)).rows[0];
  const installed = await find();
  if (installed) return { extensionSchema: installed.schema, reason: 'pgvector is installed' };
  const available = await db.query(VECTOR_EXTENSION_AVAILABLE);
  if (available.rows.length === 0) {
    return { extensionSchema: undefined, reason: 'pgvector is not installed on this server' };
  }
  try {
    // Created in `public` so that dropping a tenant schema never drops the extension.
    await db.query(CREATE_VECTOR_EXTENSION);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { extensionSchema: undefined, reason: `CREATE EXTENSION vector failed (${message})` };
  }
  const created = await find();
  return { extensionSchema: created?.schema, reason: 'pgvector was created' };
}
