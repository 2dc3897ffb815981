import { randomBytes } from 'node:crypto';
import { canonicalJson, sha256Hex } from '../audit/index.js';
import type { Database } from '../db/index.js';
import { VeridexError } from '../errors/index.js';
import {
  canonicalIdentity,
  type DirectoryAuthority,
  type DirectorySeal,
  storedTime,
} from '../identity/index.js';
import { CONSUME_INVITATION, INSERT_INVITATION, SELECT_INVITATION } from './sql.js';

/** Default lifetime of an enrolment link. */
export const DEFAULT_INVITATION_TTL_MS = 24 * 60 * 60 * 1000;

/** A one-time enrolment link for one approver. */
export interface Invitation {
  /** The secret part of the link (256 random bits); only its hash is stored. */
  token: string;
  approverId: string;
  expiresAt: string;
}

/** An open invitation: whom it enrols, and who created it (recorded with the key it adds). */
export interface OpenInvitation {
  approverId: string;
  createdBy: DirectoryAuthority;
}

/**
 * One-time enrolment invitations in `veridex_inbox_invitations`: an admin (in the inbox, or
 * `veridex approvers invite`) creates one for an approver in the directory; whoever opens the
 * link registers a passkey as that approver, once, before it expires. Hand the link to the
 * approver over a channel you trust: for an approver who never held a key it is as good as their
 * first sign-in. For an approver who holds (or held) a key, the link alone adds nothing: the
 * enrolment must also be signed by one of their active keys (README "Approvals inbox").
 */
export class InvitationStore {
  readonly #db: Database;
  readonly #now: () => Date;
  readonly #seal: DirectorySeal;

  /**
   * @param options.seal the directory key: each invitation (with who issued it, the key's
   *   future sponsor) is sealed with it; one inserted or edited with SQL enrols nobody.
   */
  constructor(db: Database, options: { seal: DirectorySeal; now?: () => Date }) {
    this.#db = db;
    this.#seal = options.seal;
    this.#now = options.now ?? (() => new Date());
  }

  /** Creates an invitation for `approverId` (who must be in the directory). */
  async create(input: {
    approverId: string;
    createdBy: DirectoryAuthority;
    ttlMs?: number;
  }): Promise<Invitation> {
    const token = randomBytes(32).toString('base64url');
    const created = this.#now();
    const expiresAt = new Date(
      created.getTime() + (input.ttlMs ?? DEFAULT_INVITATION_TTL_MS),
    ).toISOString();
    const approverId = canonicalIdentity(input.approverId);
    const record = {
      tokenHash: sha256Hex(token),
      approverId,
      createdBy: canonicalJson(input.createdBy),
      createdAt: created.toISOString(),
      expiresAt,
    };
    await this.#db.query(INSERT_INVITATION, [
      record.tokenHash,
      approverId,
      record.createdBy,
      record.createdAt,
      expiresAt,
      this.#seal.sealRecord('invitation', record),
    ]);
    return { token, approverId, expiresAt };
  }

  /** The approver an unused, unexpired invitation is for. @throws VeridexError `invitation_invalid`. */
  async check(token: unknown): Promise<OpenInvitation> {
    return this.#read(SELECT_INVITATION, token);
  }

  /** Uses the invitation up (atomically: two registrations racing cannot both have it). */
  async consume(token: unknown): Promise<OpenInvitation> {
    return this.#read(CONSUME_INVITATION, token);
  }

  async #read(sql: string, token: unknown): Promise<OpenInvitation> {
    const tokenHash = hashOf(token);
    const { rows } = await this.#db.query<{
      approver_id: string;
      created_by: string;
      created_at: Date;
      expires_at: Date;
      seal: string | null;
    }>(sql, [tokenHash, this.#now().toISOString()]);
    const row = rows[0];
    if (!row) throw invalidInvitation();
    const sealed = this.#seal.checkRecord(
      'invitation',
      {
        tokenHash,
        approverId: row.approver_id,
        createdBy: row.created_by,
        createdAt: storedTime(row.created_at),
        expiresAt: storedTime(row.expires_at),
      },
      row.seal,
    );
    // An invitation (or its inviter) nobody holding the directory key wrote enrols nobody.
    if (!sealed) throw invalidInvitation();
    return { approverId: row.approver_id, createdBy: authorityOf(row.created_by) };
  }
}

/** The link an approver opens to enrol: the token travels in the fragment, never to servers' logs. */
export function invitationLink(origin: string, token: string): string {
  return `${origin}/#/enrol/${token}`;
}

/** The SHA-256 of an invitation token, as enrolment statements and the table name it. */
export function invitationHash(token: unknown): string {
  return hashOf(token);
}

// Rows written before authorities were recorded hold free text: an operator's stated name.
function authorityOf(text: string): DirectoryAuthority {
  try {
    const value = JSON.parse(text) as DirectoryAuthority;
    if (value?.via === 'session' || value?.via === 'operator' || value?.via === 'credential') {
      return value;
    }
  } catch {}
  return { via: 'operator', operator: text.slice(0, 200) };
}

function hashOf(token: unknown): string {
  if (typeof token !== 'string' || !/^[A-Za-z0-9_-]{43}$/.test(token)) throw invalidInvitation();
  return sha256Hex(token);
}

function invalidInvitation(): VeridexError {
  return new VeridexError(
    'invitation_invalid',
    'This enrolment link is unknown, already used or expired: ask an admin for a new one.',
  );
}
