import * as ed from '@noble/ed25519';
import { afterEach, describe, expect, it } from 'vitest';
import { ApprovalManager } from '../../src/approvals/index.js';
import {
  canonicalIdentity,
  MemoryApproverDirectory,
  sameIdentity,
  signDecision,
} from '../../src/identity/index.js';
import { signAs, testApproverInits, testKey } from '../support/approvers.js';
import { describeEachDatabase } from '../support/databases.js';
import { startTestInbox, type TestInbox } from '../support/inbox.js';
import { escalate, transferProposal } from '../support/proposals.js';

/**
 * Adversary: look-alike names — alice, an approver who wants a second identity that reads as
 * her own name (and gets it added by an operator, or as a new approver through an inbox
 * admin's invitation), or an inbox admin who wants the record to read as if someone else
 * decided.
 *
 * Guarantee under attack (README "One identity per person"; THREAT-MODEL "Compare identities
 * only in canonical form (NFKC, case-folded, invisibles removed, confusable skeleton)"):
 * "`alice\u200b` and `a1ice` are alice, so a second approver by such a name is refused
 * (`identity_ambiguous`)".
 *
 * Steps: the canonical form removes Default_Ignorable code points only. U+2800 BRAILLE PATTERN
 * BLANK (category So, not ignorable, not whitespace, no confusables entry) renders as a blank:
 * `alice⠀` reads as `alice`; U+1D159 MUSICAL SYMBOL NULL NOTEHEAD renders as nothing. And
 * `ali\u0307ce` — i followed by COMBINING DOT ABOVE, which UTS #39 §5.4 names as the example of
 * a mark that looks like the base alone (i is Soft_Dotted: its own dot is replaced, one dot
 * shows) — renders as `alice`. None is refused, none compares equal to alice: a directory
 * accepts `alice⠀` beside alice, and alice's two keys under the two names make a dual approval
 * the gate proves; the inbox's invitation endpoint adds `ali̇ce` as a new approver.
 *
 * Severity: medium (one person counts twice where an operator can be talked into adding the
 * look-alike; the evidence and inbox then read "approved by alice and alice").
 *
 * Suggested fix (mechanism): in `canonicalIdentity`, refuse (identity_invalid) every code point
 * that renders blank but is not Default_Ignorable (U+2800, U+3164-like fillers, U+1D159,
 * U+115F/U+1160 already ignorable…: use a written-out table, or allow only letters, marks,
 * digits and a few punctuation characters), and refuse (identity_ambiguous) a soft-dotted base
 * (i, j, and the other Soft_Dotted letters) followed by a combining mark above such as U+0307 —
 * or drop U+0307 after a Soft_Dotted base before the skeleton, per UTS #39 §5.4.
 */
const LOOK_ALIKES = {
  'braille blank': 'alice\u2800',
  'null notehead': 'alice\u{1D159}',
  'i with combining dot above': 'ali\u0307ce',
} as const;

describe('look-alike ids of alice that render as "alice"', () => {
  for (const [kind, name] of Object.entries(LOOK_ALIKES)) {
    it(`${kind}: is alice to every comparison, or refused as an identity`, () => {
      let refused = false;
      try {
        canonicalIdentity(name);
      } catch {
        refused = true;
      }
      expect(refused || sameIdentity('alice', name)).toBe(true);
    });
  }

  it('alice and "alice⠀" (her second key, added as a second approver) do not make a dual approval', async () => {
    const twin = LOOK_ALIKES['braille blank'];
    const directory = new MemoryApproverDirectory(testApproverInits(['alice', 'bob']));
    const added = await directory
      .add({ id: twin, displayName: 'Alice', publicKeys: [ed.getPublicKey(testKey('alice-2'))] })
      .then(
        () => true,
        () => false,
      );
    const manager = new ApprovalManager({ approvers: directory });
    const proposal = transferProposal('th-braille-twin');
    const decision = escalate('dual_approval');
    const request = await manager.request(proposal, decision);
    await manager.decide(request.id, signAs(request, 'alice'));
    if (added) {
      await manager
        .decide(
          request.id,
          signDecision({ request, decision: 'approve', approver: twin }, testKey('alice-2')),
        )
        .catch(() => undefined);
    }
    const proof = await manager.prove(await manager.require(request.id), proposal, decision);
    expect(proof.proven).toBe(false);
  });
});

describeEachDatabase(
  'an inbox admin who invites a look-alike of an existing approver',
  (context) => {
    let inbox: TestInbox | undefined;
    afterEach(async () => {
      await inbox?.close();
      inbox = undefined;
    });

    it('"bob⠀" and "ali\u0307ce" are not added as new approvers beside bob and alice', async () => {
      inbox = await startTestInbox(context.db());
      const admin = await inbox.login('alice');
      const added: string[] = [];
      for (const name of ['bob\u2800', 'ali\u0307ce']) {
        const response = await inbox.call('/api/invitations', {
          method: 'POST',
          token: admin.token,
          body: JSON.stringify({ approver: name }),
        });
        const approver =
          response.status === 200
            ? ((await response.json()) as { approver: string }).approver
            : undefined;
        if (approver !== undefined && approver !== 'bob' && approver !== 'alice')
          added.push(approver);
      }
      expect(added).toEqual([]);
    });
  },
);
