import { canonicalJson, Ed25519Signer, preAuthEncoding, verifyEd25519 } from '../audit/index.js';
import { VeridexError } from '../errors/index.js';
import {
  type Approver,
  type ApproverDirectory,
  isActiveKey,
  sameIdentity,
} from '../identity/index.js';

/** DSSE payload type of a sign-in statement: a login signature is never a decision signature. */
export const LOGIN_PAYLOAD_TYPE = 'application/vnd.veridex.login+json';

/**
 * What an approver signs to open a session with an Ed25519 key: the server's one-time
 * challenge, for this service (`audience`, its origin), as this approver.
 */
export interface LoginStatement {
  approver: string;
  audience: string;
  challenge: string;
}

/** A signed sign-in statement, as `POST /api/auth/key` accepts it. */
export interface SignedLogin {
  statement: LoginStatement;
  keyId: string;
  /** Base64 Ed25519 signature over {@link loginSigningMessage}. */
  signature: string;
}

/** The bytes a sign-in signature covers: DSSE PAE of the statement's RFC 8785 JSON. */
export function loginSigningMessage(statement: LoginStatement): Uint8Array {
  return preAuthEncoding(LOGIN_PAYLOAD_TYPE, new TextEncoder().encode(canonicalJson(statement)));
}

/**
 * Signs a sign-in statement with an approver's Ed25519 key (what `veridex` clients and scripts
 * do before calling the API; browsers use passkeys instead).
 *
 * @example
 * const { challenge, audience } = await (await fetch(`${url}/api/auth/challenge`, { method: 'POST' })).json();
 * const login = signLogin({ approver: 'alice@corp', audience, challenge }, aliceKey);
 * const { token } = await (await fetch(`${url}/api/auth/key`, { method: 'POST', body: JSON.stringify(login) })).json();
 */
export function signLogin(statement: LoginStatement, key: Uint8Array | Ed25519Signer): SignedLogin {
  const signer = key instanceof Ed25519Signer ? key : new Ed25519Signer(key);
  // Exactly the three fields: extra ones (say, a challenge response's expiresAt) are not signed.
  const signed: LoginStatement = {
    approver: statement.approver,
    audience: statement.audience,
    challenge: statement.challenge,
  };
  return {
    statement: signed,
    keyId: signer.keyId,
    signature: Buffer.from(signer.sign(loginSigningMessage(signed))).toString('base64'),
  };
}

/**
 * Checks a signed sign-in statement against the directory and the service's audience:
 * well-formed, for this audience, signed by an active Ed25519 key of the approver it names.
 * The challenge itself is consumed by the caller afterwards (so a forged proof cannot burn it).
 *
 * @throws VeridexError `login_invalid` for anything that does not verify.
 */
export async function verifyKeyLogin(
  value: unknown,
  directory: ApproverDirectory,
  audience: string,
): Promise<{ approver: Approver; keyId: string; challenge: string }> {
  const login = value as Partial<SignedLogin> | null;
  const statement = login?.statement as Partial<LoginStatement> | undefined;
  if (
    typeof login !== 'object' ||
    login === null ||
    typeof login.keyId !== 'string' ||
    login.keyId.length > 200 ||
    typeof login.signature !== 'string' ||
    login.signature.length > 200 ||
    typeof statement !== 'object' ||
    statement === null ||
    typeof statement.approver !== 'string' ||
    statement.approver.length > 256 ||
    typeof statement.audience !== 'string' ||
    typeof statement.challenge !== 'string' ||
    statement.challenge.length > 200 ||
    Object.keys(statement).length !== 3
  ) {
    throw invalid('expected { statement: { approver, audience, challenge }, keyId, signature }');
  }
  if (statement.audience !== audience) {
    throw invalid(`the statement is for ${statement.audience.slice(0, 100)}, not ${audience}`);
  }
  const found = await directory.findByKey(login.keyId);
  if (
    found?.key.type !== 'ed25519' ||
    !sameIdentity(statement.approver, found.approver.id) ||
    !isActiveKey(found.approver, found.key)
  ) {
    throw invalid(
      `key ${login.keyId.slice(0, 80)} is not an active key of "${statement.approver.slice(0, 80)}"`,
    );
  }
  const message = loginSigningMessage(statement as LoginStatement);
  if (!verifyEd25519(found.key.publicKey, message, login.signature)) {
    throw invalid('the signature does not verify');
  }
  return { approver: found.approver, keyId: found.key.keyId, challenge: statement.challenge };
}

function invalid(why: string): VeridexError {
  return new VeridexError('login_invalid', `Sign-in refused: ${why}.`);
}
