// `@veridex/langgraph/identity/web`: signing a decision where Node's crypto is not available —
// a browser, a worker, an edge runtime — with WebCrypto (SHA-256) and @noble/ed25519's async
// signing (SHA-512 through WebCrypto). No `node:` import is reachable from this module; the
// result is byte-for-byte what `signDecision` produces for the same statement, and verifies the
// same way (README "Who is an approver: signed decisions").
import { getPublicKeyAsync, signAsync } from '@noble/ed25519';
import { canonicalJson } from '../../audit/canonical-json.js';
import {
  type DecisionKind,
  type DecisionStatement,
  decisionSigningMessage,
  type SignedDecision,
} from '../../audit/decision-message.js';
import type { SignDecisionInput } from '../sign-decision.js';

export type { DecisionKind, DecisionStatement, SignedDecision };

/** What to decide: the same input as `signDecision` takes (a type only: nothing of Node is loaded). */
export type WebDecisionInput = SignDecisionInput;

/**
 * Signs one decision with an approver's Ed25519 key (the 32-byte seed) using WebCrypto.
 * The key stays with the caller: nothing is sent anywhere.
 *
 * @throws TypeError for an `edit` without arguments, a key that is not 32 bytes, or a page
 *   without WebCrypto (not a secure context); this module carries no library error classes.
 * @example
 * const signed = await signDecisionWeb({ request, decision: 'approve', approver: 'alice' }, seed);
 * await fetch(`/api/approvals/${request.id}/decisions`, { method: 'POST', body: JSON.stringify(signed) });
 */
export async function signDecisionWeb(
  input: WebDecisionInput,
  privateKey: Uint8Array,
): Promise<SignedDecision> {
  if (!(privateKey instanceof Uint8Array) || privateKey.length !== 32) {
    throw new TypeError('signDecisionWeb: the key must be a 32-byte Ed25519 seed.');
  }
  if (input.decision === 'edit' && (typeof input.editedArgs !== 'object' || !input.editedArgs)) {
    throw new TypeError('signDecisionWeb: an edit decision needs editedArgs.');
  }
  if (globalThis.crypto?.subtle === undefined) {
    // Browsers offer WebCrypto only in secure contexts.
    throw new TypeError(
      'signDecisionWeb needs WebCrypto (crypto.subtle): serve the page over https or from localhost.',
    );
  }
  const statement: DecisionStatement = {
    approvalId: 'approvalId' in input.request ? input.request.approvalId : input.request.id,
    proposalHash: input.request.proposalHash,
    decision: input.decision,
    ...(input.decision === 'edit' && input.editedArgs
      ? { editedArgumentsHash: await sha256Hex(canonicalJson(input.editedArgs)) }
      : {}),
    ...(input.reason !== undefined ? { reasonHash: await sha256Hex(input.reason) } : {}),
    approver: input.approver,
    decidedAt: (input.decidedAt ?? new Date()).toISOString(),
    nonce: base64(globalThis.crypto.getRandomValues(new Uint8Array(16)), true),
  };
  const publicKey = await getPublicKeyAsync(privateKey);
  const signature = await signAsync(decisionSigningMessage(statement), privateKey);
  return {
    statement,
    keyId: `ed25519:${(await sha256Hex(publicKey)).slice(0, 16)}`,
    signature: base64(signature, false),
    ...(input.reason !== undefined ? { reason: input.reason } : {}),
    ...(input.decision === 'edit' && input.editedArgs ? { editedArgs: input.editedArgs } : {}),
  };
}

async function sha256Hex(data: string | Uint8Array): Promise<string> {
  const bytes = typeof data === 'string' ? new TextEncoder().encode(data) : data;
  const digest = new Uint8Array(await globalThis.crypto.subtle.digest('SHA-256', bytes));
  return Array.from(digest, (byte) => byte.toString(16).padStart(2, '0')).join('');
}

/** Base64 (standard, padded) or base64url (unpadded), without Node's Buffer. */
function base64(bytes: Uint8Array, url: boolean): string {
  const text = btoa(String.fromCharCode(...bytes));
  if (!url) return text;
  let end = text.length;
  while (end > 0 && text[end - 1] === '=') end--;
  return text.slice(0, end).replaceAll('+', '-').replaceAll('/', '_');
}
