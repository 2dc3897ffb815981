import { randomBytes } from 'node:crypto';
import type { Database } from '../db/index.js';
import { randomBase } from './rolling-matcher.js';
import {
  ENSURE_FINGERPRINT_KEYS,
  INSERT_FINGERPRINTS,
  LIST_FINGERPRINTS_SINCE,
  LOCK_FINGERPRINT_INSERTS,
} from './sql.js';

/** The per-database keys of the fingerprints: created at random by the first process. */
export interface FingerprintKeys {
  hmacKey: Buffer;
  rollingBase: number;
}

/** One stored form of a registered secret. Never the value. */
export interface SecretFingerprint {
  name: string;
  form: string;
  length: number;
  /** 20 bits of the mixed rolling hash of the form under the database's base. */
  tag: number;
  /** HMAC-SHA-256 of the form under the database's key, hex. */
  hmac: string;
}

interface FingerprintRow extends SecretFingerprint {
  seq: string;
}

const stores = new WeakMap<Database, SecretFingerprintStore>();

/**
 * Where the fingerprints of registered secrets live (`veridex_secret_fingerprints`, migration
 * 0011), so that every process opened on the database — the agent, the approvals CLI, a
 * service — scrubs them. What a reader of the table learns: each secret's name, the length of
 * each form, 20 bits of a hash and an HMAC under a key stored beside it — that is, a way to
 * test a guess offline. That is harmless for a generated secret (2^96 guesses and more, the
 * minimum `SecretScrubber` enforces before storing one) and why weak secrets are refused.
 *
 * @example
 * const scrubber = new SecretScrubber();
 * scrubber.attach(SecretFingerprintStore.for(db));
 * scrubber.register('STRIPE_KEY', process.env.STRIPE_KEY!);
 * await scrubber.refresh(); // stored; other processes pick it up on their next refresh
 */
export class SecretFingerprintStore {
  readonly db: Database;
  #keys: Promise<FingerprintKeys> | undefined;

  private constructor(db: Database) {
    this.db = db;
  }

  /** The store of `db` (one per handle, so that processes share its keys and state). */
  static for(db: Database): SecretFingerprintStore {
    let store = stores.get(db);
    if (!store) {
      store = new SecretFingerprintStore(db);
      stores.set(db, store);
    }
    return store;
  }

  /** The database's keys, created on first use. */
  keys(): Promise<FingerprintKeys> {
    this.#keys ??= (async () => {
      // A process that raced another one's first insert sees no row in its snapshot: ask again.
      for (;;) {
        const { rows } = await this.db.query<{ hmac_key: string; rolling_base: string }>(
          ENSURE_FINGERPRINT_KEYS,
          [randomBytes(32).toString('hex'), String(randomBase())],
        );
        const row = rows[0];
        if (row) {
          return {
            hmacKey: Buffer.from(row.hmac_key, 'hex'),
            rollingBase: Number(row.rolling_base),
          };
        }
      }
    })();
    this.#keys.catch(() => {
      this.#keys = undefined; // retry after a failure (e.g. migrations not run yet)
    });
    return this.#keys;
  }

  /** Stores fingerprints; ones already there are kept as they are. */
  async add(fingerprints: readonly SecretFingerprint[]): Promise<void> {
    if (fingerprints.length === 0) return;
    await this.db.transaction(async (tx) => {
      await tx.query(LOCK_FINGERPRINT_INSERTS, [`veridex.secret_fingerprints:${this.db.schema}`]);
      await tx.query(INSERT_FINGERPRINTS, [
        fingerprints.map((row) => row.name),
        fingerprints.map((row) => row.form),
        fingerprints.map((row) => row.length),
        fingerprints.map((row) => row.tag),
        fingerprints.map((row) => row.hmac),
      ]);
    });
  }

  /** Fingerprints stored after `seq` ('0' for all), with their sequence numbers. */
  async since(seq: string): Promise<FingerprintRow[]> {
    const { rows } = await this.db.query<FingerprintRow>(LIST_FINGERPRINTS_SINCE, [seq]);
    return rows;
  }
}
