import { vector } from '@electric-sql/pglite-pgvector';
import { expect, it } from 'vitest';
import type { Database } from '../../src/db/index.js';
import { migrate } from '../../src/db/index.js';
import { LocalEmbeddings, type VectorPreference } from '../../src/memory/index.js';
import {
  type Backend,
  describeEachDatabase,
  openBackend,
  uniqueSchema,
} from '../support/databases.js';
import { makeMemory } from './memory-fixture.js';

const extensions = { vector };

const FACTS = [
  'The billing service runs on port 8443',
  'Payments to Acme are approved by Dana',
  'The staging database is rebuilt every Sunday',
  'Quarterly reports are due on the fifth business day',
  'The mobile app uses dark mode by default',
];

async function pgvectorAvailable(db: Database): Promise<boolean> {
  const { rows } = await db.query("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'");
  return rows.length > 0;
}

/** A migrated handle on a schema of its own (the vector mode is fixed per schema). */
async function freshSchema(backend: Backend): Promise<{ db: Database; drop: () => Promise<void> }> {
  const schema = uniqueSchema();
  const db = await openBackend(backend, schema, extensions);
  await migrate(db);
  return {
    db,
    drop: async () => {
      await db.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await db.close();
    },
  };
}

describeEachDatabase(
  'vector modes',
  ({ backend, db }) => {
    it('uses pgvector where the extension exists and stored float arrays elsewhere', async () => {
      const { memory } = makeMemory(db());
      const setup = await memory.setup();
      const expected = (await pgvectorAvailable(db())) ? 'pgvector' : 'fallback';
      expect(setup.mode).toBe(expected);
      if (backend === 'pglite') expect(setup.mode).toBe('pgvector');
      const { rows } = await db().query<{ column_name: string }>(
        `SELECT column_name FROM information_schema.columns
         WHERE table_schema = current_schema() AND table_name = 'veridex_memory_records' AND column_name = 'embedding'`,
      );
      expect(rows.length).toBe(expected === 'pgvector' ? 1 : 0);
    });

    it('finds the same records in both modes, and the fallback can be forced anywhere', async () => {
      const results: Record<string, string[]> = {};
      for (const mode of ['fallback', 'auto'] as VectorPreference[]) {
        const { db: handle, drop } = await freshSchema(backend);
        try {
          const { memory } = makeMemory(handle, { vectors: mode });
          const setup = await memory.setup();
          if (mode === 'fallback') expect(setup.mode).toBe('fallback');
          await memory.proposeMany(FACTS.map((content) => ({ content })));
          // "payment"/"approve" only match the stored words through stemming and trigrams.
          const hits = await memory.recall('who approves payment for acme', {
            limit: 2,
            linked: 0,
          });
          results[mode] = hits.map((hit) => hit.record.content);
          const vectorOnly = hits.find((hit) => hit.vectorRank !== undefined);
          expect(vectorOnly?.similarity).toBeGreaterThan(0.2);
        } finally {
          await drop();
        }
      }
      expect(results.fallback![0]).toBe('Payments to Acme are approved by Dana');
      expect(results.auto![0]).toBe(results.fallback![0]);
    });

    it('refuses another embedding size or a different forced mode on a set-up schema', async () => {
      await makeMemory(db()).memory.setup();
      const otherSize = makeMemory(db(), {
        embeddings: new LocalEmbeddings({ dimensions: 64 }),
      }).memory;
      await expect(otherSize.setup()).rejects.toMatchObject({ code: 'config_invalid' });
      const mode = (await makeMemory(db()).memory.setup()).mode;
      const other = makeMemory(db(), {
        vectors: mode === 'pgvector' ? 'fallback' : 'pgvector',
      }).memory;
      await expect(other.setup()).rejects.toMatchObject({ code: 'config_invalid' });
    });

    it('requiring pgvector where it cannot be created is config_invalid', async () => {
      if (await pgvectorAvailable(db())) {
        expect((await makeMemory(db(), { vectors: 'pgvector' }).memory.setup()).mode).toBe(
          'pgvector',
        );
        return;
      }
      await expect(makeMemory(db(), { vectors: 'pgvector' }).memory.setup()).rejects.toMatchObject({
        code: 'config_invalid',
        message: expect.stringContaining('pgvector'),
      });
    });

    it('trains an inverted file at its threshold and still finds records, small namespaces exactly', async () => {
      const { memory } = makeMemory(db(), {
        invertedFile: { threshold: 60, lists: 4, probes: 1, exactBelow: 10, sample: 100 },
      });
      const topics = ['invoice', 'shipment', 'contract', 'refund'];
      await memory.proposeMany(
        Array.from({ length: 80 }, (_, index) => ({
          content: `${topics[index % 4]} number ${index} for customer ${index * 7} handled by team ${index % 5}`,
        })),
        {},
        { similarity: false },
      );
      const centroids = await db().query('SELECT cluster FROM veridex_memory_centroids');
      expect(centroids.rows).toHaveLength(4);
      const unfiled = await db().query(
        'SELECT id FROM veridex_memory_records WHERE cluster IS NULL',
      );
      expect(unfiled.rows).toHaveLength(0);
      const [hit] = await memory.recall('refund number 43 for customer 301', { linked: 0 });
      expect(hit?.record.content).toBe('refund number 43 for customer 301 handled by team 3');

      await memory.proposeMany(
        FACTS.map((content) => ({ content, namespace: ['small'] })),
        {},
      );
      const small = await memory.recall('sunday staging rebuild', {
        namespace: ['small'],
        linked: 0,
      });
      expect(small[0]?.record.content).toBe('The staging database is rebuilt every Sunday');
      const filed = await db().query(
        "SELECT id FROM veridex_memory_records WHERE namespace_path = 'small' AND cluster IS NOT NULL",
      );
      expect(filed.rows).toHaveLength(FACTS.length);
    });
  },
  { extensions },
);
