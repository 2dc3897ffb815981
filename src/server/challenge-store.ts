import { randomBytes } from 'node:crypto';
import type { Database } from '../db/index.js';
import { VeridexError } from '../errors/index.js';
import { CONSUME_CHALLENGE, INSERT_CHALLENGE } from './sql.js';

/** What a challenge may be used for; a challenge issued for one purpose never serves another. */
export type ChallengePurpose =
  | 'login'
  | 'passkey_login'
  | 'passkey_register'
  | 'passkey_decision'
  | 'enrolment_proof';

/** A challenge as it was issued. */
export interface IssuedChallenge {
  challenge: string;
  purpose: ChallengePurpose;
  approverId?: string;
  approvalId?: string;
  details: Record<string, unknown>;
  expiresAt: string;
}

/** Default challenge lifetime. */
export const DEFAULT_CHALLENGE_TTL_MS = 5 * 60 * 1000;

/**
 * One-time, short-lived challenges in `veridex_inbox_challenges`: each is 256 random bits (or a
 * value derived from one, such as a decision statement's challenge), consumed by one atomic
 * update, so the same sign-in proof or passkey assertion can never be used twice.
 */
export class ChallengeStore {
  readonly #db: Database;
  readonly #now: () => Date;
  readonly #ttlMs: number;

  constructor(db: Database, options: { now?: () => Date; ttlMs?: number } = {}) {
    this.#db = db;
    this.#now = options.now ?? (() => new Date());
    this.#ttlMs = options.ttlMs ?? DEFAULT_CHALLENGE_TTL_MS;
  }

  /** A fresh random challenge (base64url, 32 bytes). */
  static random(): string {
    return randomBytes(32).toString('base64url');
  }

  /** Stores a challenge for `purpose` (a random one unless `challenge` is given). */
  async issue(input: {
    purpose: ChallengePurpose;
    challenge?: string;
    approverId?: string;
    approvalId?: string;
    details?: Record<string, unknown>;
  }): Promise<IssuedChallenge> {
    const challenge = input.challenge ?? ChallengeStore.random();
    const created = this.#now();
    const expiresAt = new Date(created.getTime() + this.#ttlMs).toISOString();
    await this.#db.query(INSERT_CHALLENGE, [
      challenge,
      input.purpose,
      input.approverId ?? null,
      input.approvalId ?? null,
      JSON.stringify(input.details ?? {}),
      created.toISOString(),
      expiresAt,
    ]);
    return {
      challenge,
      purpose: input.purpose,
      ...(input.approverId !== undefined ? { approverId: input.approverId } : {}),
      ...(input.approvalId !== undefined ? { approvalId: input.approvalId } : {}),
      details: input.details ?? {},
      expiresAt,
    };
  }

  /**
   * Uses a challenge up: returns what it was issued with, once.
   * @throws VeridexError `challenge_invalid` when it is unknown, used, expired or for another purpose.
   */
  async consume(
    challenge: string,
    purpose: ChallengePurpose,
  ): Promise<Omit<IssuedChallenge, 'expiresAt'>> {
    if (typeof challenge !== 'string' || challenge.length === 0 || challenge.length > 200) {
      throw invalidChallenge();
    }
    const { rows } = await this.#db.query<{
      approver_id: string | null;
      approval_id: string | null;
      details: Record<string, unknown>;
    }>(CONSUME_CHALLENGE, [challenge, purpose, this.#now().toISOString()]);
    const row = rows[0];
    if (!row) throw invalidChallenge();
    return {
      challenge,
      purpose,
      ...(row.approver_id !== null ? { approverId: row.approver_id } : {}),
      ...(row.approval_id !== null ? { approvalId: row.approval_id } : {}),
      details: row.details,
    };
  }
}

function invalidChallenge(): VeridexError {
  return new VeridexError(
    'challenge_invalid',
    'The challenge is unknown, already used, expired, or was issued for something else: ask for a new one and sign again.',
  );
}
