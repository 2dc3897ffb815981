/**
 * A public key an approver signs decisions with. Ed25519 today; the union leaves room for
 * WebAuthn passkeys (added by the approvals inbox) without changing how keys are looked up.
 */
export interface Ed25519ApproverKey {
  type: 'ed25519';
  /** `ed25519:` + 16 hex digits of SHA-256(public key): the same key always has the same id. */
  keyId: string;
  /** The raw 32-byte public key, base64. */
  publicKey: string;
  addedAt: string;
  /** Set once revoked: decisions signed with the key no longer count. */
  revokedAt?: string;
  /** See {@link WebAuthnApproverKey.sponsor}. */
  sponsor?: string;
}

/**
 * A passkey (WebAuthn credential) registered in the approvals inbox. Decisions signed with it
 * are WebAuthn assertions over the decision statement's challenge (`decisionChallenge`).
 */
export interface WebAuthnApproverKey {
  type: 'webauthn';
  /** `webauthn:` + 32 hex digits of SHA-256(credential id): the same credential, the same id. */
  keyId: string;
  /** The credential's COSE public key, base64. */
  publicKey: string;
  /** The credential id, base64url (what authenticators and browsers call it). */
  credentialId: string;
  /** The relying party id it was registered for: assertions for another RP never verify. */
  rpId: string;
  /** COSE algorithm (-8 EdDSA, -7 ES256, -257 RS256). */
  algorithm: number;
  /** Transports the browser reported (`internal`, `usb`, `hybrid`, …), for sign-in hints. */
  transports?: string[];
  /**
   * The web origins (`https://inbox.corp.example`) the passkey may decide on: the inbox's, as
   * recorded at enrolment and sealed with the key. A passkey is scoped to its relying party's
   * host, not to a port or scheme, so any page on the same host can ask it for an assertion;
   * a decision counts only when the browser reported one of these origins, not in a frame.
   * A passkey enrolled before origins were recorded has none, and decides nothing until it is
   * enrolled again.
   */
  origins?: string[];
  addedAt: string;
  revokedAt?: string;
  /**
   * The inbox admin whose invitation enrolled this key without the approver's own proof (a new
   * approver, or one who never held a key): whoever opened the link may be that admin, so a
   * decision with this key never counts in one quorum with the sponsor's, nor on a call the
   * sponsor proposed. Absent when the approver proved the enrolment or an operator added it.
   */
  sponsor?: string;
}

/** Any key type an approver can hold. */
export type ApproverKey = Ed25519ApproverKey | WebAuthnApproverKey;

/** A passkey to add to an approver (`ApproverDirectory.addKey`), as registration verified it. */
export interface PasskeyInit {
  type: 'webauthn';
  /** COSE public key bytes (or base64). */
  publicKey: Uint8Array | string;
  /** Credential id, base64url. */
  credentialId: string;
  rpId: string;
  algorithm: number;
  transports?: readonly string[];
  /** The origins it may decide on (see {@link WebAuthnApproverKey.origins}). */
  origins?: readonly string[];
}

/** One person (or service identity) allowed to decide approvals. */
export interface Approver {
  /** Stable id in canonical form (`canonicalIdentity`), e.g. `alice@corp.example`. */
  id: string;
  /** What inboxes and reports show; free text, never compared. */
  displayName: string;
  /** Roles and groups, canonical; tiers and routes can name them as `role:<name>`. */
  roles: string[];
  keys: ApproverKey[];
  addedAt: string;
  /** Set once revoked: none of the approver's decisions count any more. */
  revokedAt?: string;
}

/** What a directory needs to register an approver. */
export interface ApproverInit {
  id: string;
  displayName?: string;
  roles?: readonly string[];
  /** Raw 32-byte Ed25519 public keys, or PEM/hex/base64 text (see `readPublicKey`). */
  publicKeys?: ReadonlyArray<Uint8Array | string>;
}

/** An approver key that currently counts: neither it nor its approver is revoked. */
export function isActiveKey(approver: Approver, key: ApproverKey): boolean {
  return approver.revokedAt === undefined && key.revokedAt === undefined;
}
