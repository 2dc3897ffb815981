// Passkey ceremonies in the browser (@simplewebauthn/browser), and the check that a decision
// challenge is derived from exactly the statement shown — before the authenticator signs it.
import {
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  startAuthentication,
  startRegistration,
} from '@simplewebauthn/browser';
import canonicalize from 'canonicalize';
import { type Approval, post, setCsrfToken } from './api.js';

const DECISION_PAYLOAD_TYPE = 'application/vnd.veridex.decision+json';

interface Signed {
  approver: { id: string; displayName: string };
  csrfToken: string;
}

/** Registers a passkey with a one-time invitation; signs in. */
export async function enrol(invitation: string): Promise<Signed> {
  const optionsJSON = await post<PublicKeyCredentialCreationOptionsJSON>(
    '/api/passkeys/register/options',
    {
      invitation,
    },
  );
  const response = await startRegistration({ optionsJSON });
  const signed = await post<Signed>('/api/passkeys/register', { invitation, response });
  setCsrfToken(signed.csrfToken);
  return signed;
}

/** Signs in with a passkey. */
export async function signIn(): Promise<Signed> {
  const optionsJSON = await post<PublicKeyCredentialRequestOptionsJSON>(
    '/api/passkeys/login/options',
  );
  const response = await startAuthentication({ optionsJSON });
  const signed = await post<Signed>('/api/passkeys/login', { response });
  setCsrfToken(signed.csrfToken);
  return signed;
}

interface Statement {
  approvalId: string;
  proposalHash: string;
  decision: string;
  reasonHash?: string;
  approver: string;
}

/** SHA-256(DSSE PAE(statement)) as base64url: the challenge the passkey must sign. */
async function challengeOf(statement: Statement): Promise<string> {
  const body = new TextEncoder().encode(canonicalize(statement) ?? '');
  const type = new TextEncoder().encode(DECISION_PAYLOAD_TYPE);
  const header = new TextEncoder().encode(
    `DSSEv1 ${type.length} ${DECISION_PAYLOAD_TYPE} ${body.length} `,
  );
  const message = new Uint8Array(header.length + body.length);
  message.set(header);
  message.set(body, header.length);
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', message));
  let binary = '';
  for (const byte of digest) binary += String.fromCharCode(byte);
  // Padding is at most two '=' at the end: cut them without a regular expression.
  const base64 = btoa(binary).replace(/\+/g, '-').replace(/\//g, '_');
  const end = base64.endsWith('==') ? -2 : base64.endsWith('=') ? -1 : base64.length;
  return base64.slice(0, end);
}

async function sha256Hex(text: string): Promise<string> {
  const digest = new Uint8Array(
    await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text)),
  );
  return [...digest].map((byte) => byte.toString(16).padStart(2, '0')).join('');
}

/**
 * Decides with a passkey: asks the service for the statement, checks that it is about the
 * request on screen (id, proposal hash, decision, reason) and that the challenge is derived from
 * it, has the authenticator sign it, and posts the signed decision.
 */
export async function decideWithPasskey(
  approval: Approval,
  decision: 'approve' | 'reject',
  reason: string,
): Promise<Approval> {
  const prepared = await post<{
    statement: Statement & Record<string, unknown>;
    options: PublicKeyCredentialRequestOptionsJSON;
  }>(`/api/approvals/${encodeURIComponent(approval.id)}/passkey-challenge`, {
    decision,
    ...(reason ? { reason } : {}),
  });
  const { statement, options } = prepared;
  if (
    statement.approvalId !== approval.id ||
    statement.proposalHash !== approval.proposalHash ||
    statement.decision !== decision ||
    (reason
      ? statement.reasonHash !== (await sha256Hex(reason))
      : statement.reasonHash !== undefined)
  ) {
    throw new Error(
      'The service asked to sign something other than what is shown; nothing was signed.',
    );
  }
  if ((await challengeOf(statement)) !== options.challenge) {
    throw new Error('The challenge does not match the decision shown; nothing was signed.');
  }
  const response = await startAuthentication({ optionsJSON: options });
  const keyId = `webauthn:${(await sha256HexBytes(response.rawId)).slice(0, 32)}`;
  return post<Approval>(`/api/approvals/${encodeURIComponent(approval.id)}/decisions`, {
    statement,
    keyId,
    signature: response.response.signature,
    webauthn: {
      authenticatorData: response.response.authenticatorData,
      clientDataJSON: response.response.clientDataJSON,
    },
    ...(reason ? { reason } : {}),
  });
}

async function sha256HexBytes(base64url: string): Promise<string> {
  const binary = atob(base64url.replace(/-/g, '+').replace(/_/g, '/'));
  const bytes = Uint8Array.from(binary, (char) => char.charCodeAt(0));
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
  return [...digest].map((byte) => byte.toString(16).padStart(2, '0')).join('');
}
