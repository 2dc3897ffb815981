import {
  Ed25519Signer,
  generateKeyPair,
  sealEvidence,
  type TraceEvent,
  type TrustedApprover,
  verifyEvidence,
} from '../../src/audit/index.js';
import { trustedApprovers } from './approvers.js';

/**
 * The agent's evidence key as an insider holding it uses it: whatever events they re-chain,
 * {@link verifyResealed} seals with it and verifies as an auditor would.
 */
export const agentKey = new Ed25519Signer(generateKeyPair().privateKey);

/** The approvers an auditor trusts, by test name (see `trustedApprovers`). */
export function trusted(names: string[]): TrustedApprover[] {
  return trustedApprovers(names);
}

/**
 * Seals `events` with {@link agentKey} and verifies the bundle as an auditor who trusts
 * `approvers` (none: `verify` without `--approvers`) would.
 */
export function verifyResealed(
  threadId: string,
  events: readonly TraceEvent[],
  approvers?: readonly TrustedApprover[],
  options: { trustBundleKeys?: boolean } = {},
) {
  const bundle = JSON.parse(JSON.stringify(sealEvidence({ threadId, events }, [agentKey])));
  return verifyEvidence(bundle, {
    keys: [agentKey.verifier()],
    ...(approvers ? { approvers } : {}),
    ...options,
  });
}

/** The paid thread's transfer call (see paid-thread.ts). */
export const isPay = (event: TraceEvent) => event.payload.toolCallId === 'call_pay';

/** The transfer's `tool_executed` event. */
export const executedTransfer = (events: readonly TraceEvent[]) =>
  events.find((event) => event.type === 'tool_executed' && event.payload.toolName === 'transfer');
