import { createHash } from 'node:crypto';
import * as ed from '@noble/ed25519';
import type { Approver, ApproverInit, SignedDecision } from '../../src/identity/index.js';
import { buildApprover, signDecision } from '../../src/identity/index.js';

/** The people the tests approve as; each gets a deterministic Ed25519 key (seed = SHA-256 of the name). */
export const TEST_APPROVERS = [
  'alice',
  'bob',
  'carol',
  'lead',
  'cfo',
  'controller',
  'ops@example.com',
] as const;

export type TestApproverName = (typeof TEST_APPROVERS)[number] | (string & {});

/** A deterministic private key for `name` (tests only: a real key comes from the CSPRNG). */
export function testKey(name: string): Uint8Array {
  return new Uint8Array(createHash('sha256').update(`veridex-test-approver:${name}`).digest());
}

/** Directory entries for `names` (default: all of {@link TEST_APPROVERS}), with roles by name. */
export function testApproverInits(
  names: readonly string[] = TEST_APPROVERS,
  roles: Readonly<Record<string, readonly string[]>> = {},
): ApproverInit[] {
  return names.map((name) => ({
    id: name,
    displayName: name[0]!.toUpperCase() + name.slice(1),
    roles: roles[name] ?? [],
    publicKeys: [ed.getPublicKey(testKey(name))],
  }));
}

/** What a test signs: an ApprovalRequest, a PendingApproval, or an id and proposal hash. */
export type Signable =
  | { id: string; proposalHash: string }
  | { approvalId: string; proposalHash: string };

/** `name`'s signed decision on `request` (`approver` in the statement defaults to `name`). */
export function signAs(
  request: Signable,
  name: string,
  decision: 'approve' | 'reject' | 'edit' = 'approve',
  extra: {
    reason?: string;
    editedArgs?: Record<string, unknown>;
    decidedAt?: Date;
    approver?: string;
  } = {},
): SignedDecision {
  return signDecision(
    {
      request,
      decision,
      approver: extra.approver ?? name,
      ...(extra.reason !== undefined ? { reason: extra.reason } : {}),
      ...(extra.editedArgs ? { editedArgs: extra.editedArgs } : {}),
      ...(extra.decidedAt ? { decidedAt: extra.decidedAt } : {}),
    },
    testKey(name),
  );
}

/** The approvers an auditor trusts (as `veridex approvers export` writes them) for `names`. */
export function trustedApprovers(names: readonly string[] = TEST_APPROVERS): Approver[] {
  return testApproverInits(names).map((init) => buildApprover(init, new Date(0)));
}
