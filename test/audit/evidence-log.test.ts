import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  AuditLog,
  canonicalJson,
  checkTreeHead,
  Ed25519Signer,
  Ed25519Verifier,
  EVIDENCE_PAYLOAD_TYPE,
  type EvidenceBody,
  type EvidenceBundle,
  encodeBase64,
  eventTree,
  generateKeyPair,
  HmacSigner,
  preAuthEncoding,
  proveEventInclusion,
  type SignedTreeHead,
  sealEvidence,
  sealEvidenceWithHead,
  signTreeHead,
  TREE_HEAD_FORMAT,
  type TraceEvent,
  verifyEventInclusion,
  verifyEvidence,
  verifyInclusion,
} from '../../src/audit/index.js';
import { VeridexError } from '../../src/errors/index.js';
import { rechain } from '../support/rechain.js';

/** Events of one thread, with an approval whose approver an insider will want to change. */
async function history(count: number, threadId = 'payout-1'): Promise<TraceEvent[]> {
  let clock = Date.parse('2026-03-01T09:00:00Z');
  const audit = new AuditLog({
    now: () => {
      clock += 1000;
      return new Date(clock);
    },
  });
  await audit.append({ threadId, type: 'run_started', payload: { agent: 'payout-bot' } });
  await audit.append({
    threadId,
    type: 'approval_decided',
    payload: { approvalId: 'apr_1', approver: 'alice', approverName: 'Alice', decision: 'approve' },
  });
  for (let index = 2; index < count; index++) {
    await audit.append({ threadId, type: 'turn_started', payload: { index } });
  }
  return audit.events(threadId);
}

function resign(body: EvidenceBody, signer: Ed25519Signer): EvidenceBundle {
  const payload = new TextEncoder().encode(canonicalJson(body));
  return {
    payloadType: EVIDENCE_PAYLOAD_TYPE,
    payload: encodeBase64(payload),
    signatures: [
      {
        keyid: signer.keyId,
        sig: encodeBase64(signer.sign(preAuthEncoding(EVIDENCE_PAYLOAD_TYPE, payload))),
      },
    ],
  };
}

const bodyOf = (bundle: EvidenceBundle): EvidenceBody =>
  JSON.parse(Buffer.from(bundle.payload, 'base64').toString('utf8'));

const signer = new Ed25519Signer(generateKeyPair().privateKey);
const keys = [signer.verifier()];

describe('signed tree heads', () => {
  const head = signTreeHead(
    {
      format: TREE_HEAD_FORMAT,
      scope: 'thread',
      threadId: 't1',
      treeSize: 3,
      rootHash: 'ab'.repeat(32),
      timestamp: '2026-03-01T09:00:00.000Z',
    },
    [signer],
  );

  it('verify with the signing key and not with another', () => {
    expect(checkTreeHead(head, keys)).toMatchObject({
      head,
      problems: [],
      signatures: [{ keyid: signer.keyId, status: 'valid' }],
    });
    const other = new Ed25519Signer(generateKeyPair().privateKey).verifier();
    expect(checkTreeHead(head, [other]).problems).toEqual([
      `no signature by a trusted key (signed by unknown key ${signer.keyId})`,
    ]);
  });

  it('detect every signed field that changed', () => {
    const edits: Array<Partial<SignedTreeHead>> = [
      { treeSize: 4 },
      { rootHash: 'cd'.repeat(32) },
      { threadId: 't2' },
      { timestamp: '2026-03-01T09:00:01.000Z' },
    ];
    for (const edit of edits) {
      expect(checkTreeHead({ ...head, ...edit }, keys).problems, JSON.stringify(edit)).toEqual([
        `signature by ${signer.keyId} does not verify (the head or its signature was changed)`,
        'no valid signature by a trusted key',
      ]);
    }
    expect(checkTreeHead({ ...head, scope: 'global' }, keys).problems).toEqual([
      'tree head thread id does not fit its scope',
    ]);
  });

  it('are signed under their own payload type: a head signature is never a bundle signature', () => {
    const message = new TextEncoder().encode(canonicalJson({ ...head, signatures: undefined }));
    expect(
      keys[0]!.verify(
        preAuthEncoding(EVIDENCE_PAYLOAD_TYPE, message),
        Buffer.from(head.signatures[0]!.sig, 'base64'),
      ),
    ).toBe(false);
  });

  it('work with HMAC signers too', () => {
    const hmac = new HmacSigner('k'.repeat(32));
    const signed = signTreeHead({ ...head }, [hmac]);
    expect(checkTreeHead(signed, [hmac]).problems).toEqual([]);
  });

  it('never throw on garbage (property)', () => {
    fc.assert(
      fc.property(fc.anything(), (value) => {
        expect(checkTreeHead(value, keys).problems.length).toBeGreaterThan(0);
      }),
    );
    expect(checkTreeHead({ ...head, threadId: '\ud800' }, keys).problems.length).toBe(1);
    expect(checkTreeHead({ ...head, rootHash: 'AB'.repeat(32) }, keys).problems).toEqual([
      'tree head root hash is not 64 lower-case hex digits',
    ]);
  });
});

describe('evidence bundles with tree heads (veridex.evidence/v2)', () => {
  let events: TraceEvent[];
  let older: EvidenceBundle;
  let olderHead: SignedTreeHead;

  beforeAll(async () => {
    events = await history(12);
    const sealed = sealEvidenceWithHead({ threadId: 'payout-1', events: events.slice(0, 8) }, [
      signer,
    ]);
    older = sealed.bundle;
    olderHead = sealed.treeHead;
  });

  it('carry a signed head whose root is the Merkle tree of their events', () => {
    const body = bodyOf(older);
    const tree = eventTree(events.slice(0, 8));
    expect(body.format).toBe('veridex.evidence/v2');
    expect(body.log?.treeHead).toEqual(olderHead);
    expect(olderHead).toMatchObject({ scope: 'thread', threadId: 'payout-1', treeSize: 8 });
    expect(olderHead.rootHash).toBe(tree.root());
    const result = verifyEvidence(older, { keys });
    expect(result.valid).toBe(true);
    expect(result.log).toEqual({ treeSize: 8, rootHash: tree.root() });
  });

  it('prove each event’s inclusion under the signed root (RFC 9162 audit paths)', () => {
    const tree = eventTree(events.slice(0, 8));
    for (let index = 0; index < 8; index++) {
      expect(
        verifyInclusion(index, 8, tree.leaf(index), tree.inclusionProof(index), olderHead.rootHash),
      ).toBe(true);
    }
  });

  it('hand out one event with its inclusion proof, verifiable without the rest of the thread', () => {
    const body = bodyOf(older);
    const decision = body.events.find((event) => event.type === 'approval_decided')!;
    const excerpt = JSON.parse(
      JSON.stringify(proveEventInclusion(body.events, body.log!.treeHead, decision.eventId)),
    );
    expect(verifyEventInclusion(excerpt, { keys })).toMatchObject({
      valid: true,
      event: { eventId: decision.eventId },
    });
    const renamed = {
      ...excerpt,
      event: { ...excerpt.event, payload: { ...excerpt.event.payload, approver: 'cfo@corp' } },
    };
    expect(verifyEventInclusion(renamed, { keys }).reasons).toEqual([
      'the event does not hash to its recorded hash (it was changed)',
    ]);
    const rehashed = rechain(
      body.events.map((e) => (e.eventId === decision.eventId ? approverChanged(e) : e)),
    );
    expect(
      verifyEventInclusion({ ...excerpt, event: rehashed[excerpt.index] }, { keys }).reasons,
    ).toEqual(['the inclusion proof does not lead to the signed root']);
    expect(verifyEventInclusion({ ...excerpt, index: excerpt.index + 1 }, { keys }).valid).toBe(
      false,
    );
    expect(verifyEventInclusion(excerpt, { keys: [new HmacSigner('x'.repeat(32))] }).valid).toBe(
      false,
    );
    expect(() => proveEventInclusion(body.events, olderHead, 'evt_missing')).toThrow(VeridexError);
    expect(() => proveEventInclusion(events, olderHead, decision.eventId)).toThrow(/not the head/);
    fc.assert(
      fc.property(fc.anything(), (value) => {
        expect(verifyEventInclusion(value, { keys }).valid).toBe(false);
        expect(verifyEventInclusion({ ...excerpt, event: value }, { keys }).valid).toBe(false);
      }),
    );
  });

  it('are invalid when the signed head does not match the events, even re-signed', () => {
    const body = bodyOf(older);
    const otherRoot = eventTree(events.slice(0, 7)).root();
    const forged = signTreeHead({ ...body.log!.treeHead, rootHash: otherRoot }, [signer]);
    const result = verifyEvidence(resign({ ...body, log: { treeHead: forged } }, signer), { keys });
    expect(result.reasons).toEqual([
      'tree head root does not match the events (an event was changed, dropped, inserted or reordered)',
    ]);
    const wrongSize = signTreeHead({ ...body.log!.treeHead, treeSize: 9 }, [signer]);
    expect(
      verifyEvidence(resign({ ...body, log: { treeHead: wrongSize } }, signer), { keys }).reasons,
    ).toEqual(['tree head size does not match the events']);
    const { log: _log, ...headless } = body;
    expect(verifyEvidence(resign(headless, signer), { keys }).reasons).toEqual([
      'bundle has no tree head',
    ]);
  });

  it('link to the previous head with a consistency proof, and refuse to seal a rewritten log', () => {
    const newer = sealEvidence({ threadId: 'payout-1', events, previous: olderHead }, [signer]);
    const link = bodyOf(newer).log?.previous;
    expect(link?.treeHead).toEqual(olderHead);
    expect(link?.consistency.length).toBeGreaterThan(0);
    const result = verifyEvidence(newer, { keys });
    expect(result.valid).toBe(true);
    expect(result.log?.previous).toMatchObject({ treeSize: 8, consistent: true });

    const rewritten = rechain(
      events.map((event, index) => (index === 1 ? approverChanged(event) : event)),
    );
    expect(() =>
      sealEvidence({ threadId: 'payout-1', events: rewritten, previous: olderHead }, [signer]),
    ).toThrow(expect.objectContaining({ code: 'audit_log_inconsistent' }));
    expect(() =>
      sealEvidence({ threadId: 'payout-1', events: events.slice(0, 6), previous: olderHead }, [
        signer,
      ]),
    ).toThrow(/only 6: entries it covered were dropped/);
  });

  it('are invalid when the previous link does not verify', () => {
    const newer = sealEvidence({ threadId: 'payout-1', events, previous: olderHead }, [signer]);
    const body = bodyOf(newer);
    const badProof = {
      ...body,
      log: {
        ...body.log!,
        previous: { ...body.log!.previous!, consistency: body.log!.previous!.consistency.slice(1) },
      },
    };
    expect(verifyEvidence(resign(badProof, signer), { keys }).reasons).toEqual([
      `the bundle does not extend its previous tree head (thread "payout-1" at 8 event(s), ${olderHead.timestamp}): the consistency proof does not verify`,
    ]);
  });

  function approverChanged(event: TraceEvent): TraceEvent {
    return { ...event, payload: { ...event.payload, approverName: 'CFO', approver: 'cfo@corp' } };
  }

  // The insider: rewrites rows, recomputes every hash, and re-seals with the agent's key.
  const attacks: Record<string, (all: TraceEvent[]) => TraceEvent[]> = {
    'rewrite an approver': (all) => rechain(all.map((e, i) => (i === 1 ? approverChanged(e) : e))),
    'drop the last event the older bundle covered': (all) =>
      rechain([...all.slice(0, 7), ...all.slice(8)]),
    'drop the tail': (all) => rechain(all.slice(0, 7)),
    'reorder two events': (all) => rechain([all[0]!, all[2]!, all[1]!, ...all.slice(3)]),
    'insert an event': (all) =>
      rechain([...all.slice(0, 3), { ...all[2]!, eventId: 'evt_forged' }, ...all.slice(3)]),
  };

  for (const [name, attack] of Object.entries(attacks)) {
    it(`detect an insider who can ${name}, recompute the chain and re-seal — given the older bundle or its head`, () => {
      const forged = attack(events);
      const resealed = sealEvidence({ threadId: 'payout-1', events: forged }, [signer]);
      // Alone, the re-sealed bundle is perfectly valid: this is why anchors are needed.
      expect(verifyEvidence(resealed, { keys }).valid).toBe(true);

      const sinceBundle = verifyEvidence(resealed, { keys, previous: older });
      expect(sinceBundle.valid).toBe(false);
      expect(sinceBundle.log?.since).toMatchObject({
        kind: 'bundle',
        treeSize: 8,
        consistent: false,
      });
      expect(sinceBundle.reasons.join('\n')).toMatch(
        forged.length < 8
          ? /covered 8 events .* only \d+: events were dropped/
          : /its event \d+ \(\w+ [\w-]+\) was rewritten/,
      );
      const sinceHead = verifyEvidence(resealed, { keys, previous: olderHead });
      expect(sinceHead.valid).toBe(false);
      expect(sinceHead.log?.since?.kind ?? 'head').toBe('head');
    });
  }

  it('accept an honest extension of the older bundle or head (appends never break it)', () => {
    const newer = sealEvidence({ threadId: 'payout-1', events }, [signer]);
    for (const previous of [older, olderHead]) {
      const result = verifyEvidence(newer, { keys, previous });
      expect(result.reasons).toEqual([]);
      expect(result.log?.since).toMatchObject({ treeSize: 8, consistent: true });
      expect(result.log?.since?.proofLength).toBeGreaterThan(0);
    }
    // The same bundle is consistent with itself.
    expect(verifyEvidence(older, { keys, previous: older }).valid).toBe(true);
  });

  it('refuse an older view that does not verify, or of another thread', async () => {
    const foreign = sealEvidence({ threadId: 'other', events: await history(3, 'other') }, [
      signer,
    ]);
    expect(verifyEvidence(older, { keys, previous: foreign }).reasons).toEqual([
      'the older bundle is of thread "other", this bundle of thread "payout-1"',
    ]);
    const unknownKey = new Ed25519Signer(generateKeyPair().privateKey);
    const strangerHead = signTreeHead(olderHead, [unknownKey]);
    expect(verifyEvidence(older, { keys, previous: strangerHead }).reasons).toEqual([
      `the older head: no signature by a trusted key (signed by unknown key ${unknownKey.keyId})`,
    ]);
    const tampered = { ...older, payload: older.payload.replace(/.$/, 'A') };
    expect(verifyEvidence(older, { keys, previous: tampered }).reasons[0]).toMatch(
      /^the older bundle does not verify: /,
    );
    for (const garbage of [null, 42, 'text', [], {}]) {
      expect(verifyEvidence(older, { keys, previous: garbage }).valid).toBe(false);
    }
  });
});

describe('consistency between bundles (property)', () => {
  it('a random edit to the older bundle’s events breaks it; appends never do', async () => {
    const all = await history(24, 'prop-thread');
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 16 }),
        fc.integer({ min: 0, max: 8 }),
        fc.nat(),
        fc.constantFrom('payload', 'drop', 'swap', 'insert', 'timestamp'),
        (olderSize, growth, rawAt, kind) => {
          const older = sealEvidence({ threadId: 'prop-thread', events: all.slice(0, olderSize) }, [
            signer,
          ]);
          const honest = all.slice(0, olderSize + growth);
          expect(
            verifyEvidence(sealEvidence({ threadId: 'prop-thread', events: honest }, [signer]), {
              keys,
              previous: older,
            }).valid,
          ).toBe(true);
          const at = rawAt % olderSize;
          const edited = [...honest];
          if (kind === 'payload') edited[at] = { ...edited[at]!, payload: { edited: at } };
          else if (kind === 'timestamp')
            edited[at] = { ...edited[at]!, timestamp: '2030-01-01T00:00:00.000Z' };
          else if (kind === 'drop') edited.splice(at, 1);
          else if (kind === 'insert')
            edited.splice(at, 0, { ...edited[at]!, eventId: 'evt_inserted' });
          else if (at + 1 < edited.length)
            [edited[at], edited[at + 1]] = [edited[at + 1]!, edited[at]!];
          else return;
          const forged = sealEvidence({ threadId: 'prop-thread', events: rechain(edited) }, [
            signer,
          ]);
          expect(verifyEvidence(forged, { keys, previous: older }).valid).toBe(false);
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe('veridex.evidence/v1 bundles', () => {
  // In the v1 format (before tree heads), signed with the RFC 8032 test key 1 (re-sealed when
  // the verifier began refusing a tool_executed event with no call id: its third event is a
  // transfer_executed now).
  const v1 = JSON.parse(
    readFileSync(new URL('./fixtures/evidence-v1.json', import.meta.url), 'utf8'),
  );
  const v1Key = new Ed25519Verifier(
    new Uint8Array(
      Buffer.from('d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a', 'hex'),
    ),
  );

  it('still verify, their tree computed from their events', () => {
    const result = verifyEvidence(v1, { keys: [v1Key] });
    expect(result.reasons).toEqual([]);
    expect(result.body?.format).toBe('veridex.evidence/v1');
    expect(result.log?.treeSize).toBe(4);
  });

  it('serve as the older view of a v2 bundle that extends them, and catch one that does not', () => {
    const v1Events = bodyOf(v1).events;
    const extended = rechain([
      ...v1Events,
      { ...v1Events[2]!, eventId: 'evt_5', type: 'run_started' as const },
    ]);
    const v1Signer = new Ed25519Signer(
      new Uint8Array(
        Buffer.from('9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60', 'hex'),
      ),
    );
    const newer = sealEvidence({ threadId: 'v1-thread', events: extended }, [v1Signer]);
    expect(verifyEvidence(newer, { keys: [v1Key], previous: v1 }).reasons).toEqual([]);
    const dropped = sealEvidence({ threadId: 'v1-thread', events: rechain(v1Events.slice(1)) }, [
      v1Signer,
    ]);
    expect(verifyEvidence(dropped, { keys: [v1Key], previous: v1 }).valid).toBe(false);
  });
});

describe('sealEvidence errors', () => {
  it('refuses a previous head of another thread', async () => {
    const events = await history(3);
    const { treeHead } = sealEvidenceWithHead({ threadId: 'payout-1', events }, [signer]);
    const error = (() => {
      try {
        sealEvidence({ threadId: 'payout-1', events, previous: { ...treeHead, threadId: 'x' } }, [
          signer,
        ]);
        return undefined;
      } catch (caught) {
        return caught;
      }
    })();
    expect(VeridexError.is(error, 'audit_log_inconsistent')).toBe(true);
    expect((error as Error).message).toContain('the previous head is not one of this thread');
  });
});
