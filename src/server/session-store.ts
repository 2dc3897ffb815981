import { createHash, randomBytes } from 'node:crypto';
import { sha256Hex } from '../audit/index.js';
import type { Database } from '../db/index.js';
import { type DirectorySeal, storedTime } from '../identity/index.js';
import { INSERT_SESSION, REVOKE_SESSION, SELECT_SESSION } from './sql.js';

/** How an approver proved who they are when signing in. */
export type SessionMethod = 'ed25519' | 'passkey';

/** A signed-in approver. */
export interface Session {
  /** Canonical approver id. */
  approverId: string;
  /** The directory key the approver proved they hold. */
  keyId: string;
  method: SessionMethod;
  createdAt: string;
  expiresAt: string;
  /**
   * The token a cookie-authenticated page must echo in `X-CSRF-Token` on every mutating
   * request. Derived from the session token, so it is never stored and cannot be read from the
   * database; a cross-site page can neither read the HttpOnly cookie nor this value.
   */
  csrfToken: string;
}

interface SessionRow {
  approver_id: string;
  key_id: string;
  method: SessionMethod;
  created_at: Date;
  expires_at: Date;
  seal: string | null;
}

/** Default session lifetime: short, so a forgotten tab stops counting soon. */
export const DEFAULT_SESSION_TTL_MS = 15 * 60 * 1000;

/**
 * Sign-in sessions in `veridex_inbox_sessions`. A session token is 256 random bits handed to the
 * client once; the table holds only its SHA-256, so someone who can read the database cannot
 * sign in with what they read. Sessions expire after `ttlMs` (absolute, not sliding).
 */
export class SessionStore {
  readonly #db: Database;
  readonly #ttlMs: number;
  readonly #now: () => Date;
  readonly #seal: DirectorySeal;

  /**
   * @param options.seal the directory key: each session row is sealed with it, and a row whose
   *   seal does not verify (inserted or edited with SQL) opens nothing.
   */
  constructor(db: Database, options: { seal: DirectorySeal; ttlMs?: number; now?: () => Date }) {
    this.#db = db;
    this.#seal = options.seal;
    this.#ttlMs = options.ttlMs ?? DEFAULT_SESSION_TTL_MS;
    this.#now = options.now ?? (() => new Date());
  }

  /** Opens a session and returns its token (give it to the client; it is not kept). */
  async create(
    approverId: string,
    keyId: string,
    method: SessionMethod,
  ): Promise<{ token: string; session: Session }> {
    const token = randomBytes(32).toString('base64url');
    const created = this.#now();
    const expires = new Date(created.getTime() + this.#ttlMs);
    const record = {
      tokenHash: sha256Hex(token),
      approverId,
      keyId,
      method,
      createdAt: created.toISOString(),
      expiresAt: expires.toISOString(),
    };
    await this.#db.query(INSERT_SESSION, [
      record.tokenHash,
      approverId,
      keyId,
      method,
      record.createdAt,
      record.expiresAt,
      this.#seal.sealRecord('inbox_session', record),
    ]);
    return {
      token,
      session: {
        approverId,
        keyId,
        method,
        createdAt: created.toISOString(),
        expiresAt: expires.toISOString(),
        csrfToken: csrfTokenFor(token),
      },
    };
  }

  /** The live session a token opens, or `undefined` (unknown, expired or signed out). */
  async find(token: string): Promise<Session | undefined> {
    if (typeof token !== 'string' || token.length === 0 || token.length > 200) return undefined;
    const tokenHash = sha256Hex(token);
    const { rows } = await this.#db.query<SessionRow>(SELECT_SESSION, [
      tokenHash,
      this.#now().toISOString(),
    ]);
    const row = rows[0];
    if (!row) return undefined;
    const sealed = this.#seal.checkRecord(
      'inbox_session',
      {
        tokenHash,
        approverId: row.approver_id,
        keyId: row.key_id,
        method: row.method,
        createdAt: storedTime(row.created_at),
        expiresAt: storedTime(row.expires_at),
      },
      row.seal,
    );
    // A session nobody holding the directory key opened: as if unknown.
    if (!sealed) return undefined;
    return {
      approverId: row.approver_id,
      keyId: row.key_id,
      method: row.method,
      createdAt: row.created_at.toISOString(),
      expiresAt: row.expires_at.toISOString(),
      csrfToken: csrfTokenFor(token),
    };
  }

  /** Ends the session the token opens (sign-out). */
  async revoke(token: string): Promise<void> {
    await this.#db.query(REVOKE_SESSION, [sha256Hex(token), this.#now().toISOString()]);
  }
}

/** The CSRF token bound to a session token (one-way: it does not reveal the session token). */
export function csrfTokenFor(sessionToken: string): string {
  return createHash('sha256').update(`veridex.csrf:${sessionToken}`).digest('base64url');
}
