import {
  AuditLog,
  checkTreeHead,
  Ed25519Signer,
  eventTree,
  generateKeyPair,
  sealEvidence,
  sealEvidenceWithHead,
  type TraceEvent,
  verifyConsistency,
  verifyEvidence,
  verifyInclusion,
} from '../src/audit/index.js';
import { median, ms, timeRepeated } from './stats.js';

/** Builds a realistic chain: tool calls with arguments and outputs, ~290 bytes per event. */
async function buildEvents(count: number): Promise<TraceEvent[]> {
  const audit = new AuditLog();
  const types = ['tool_proposed', 'policy_decision', 'tool_executed'] as const;
  const batch = [];
  for (let index = 0; index < count; index++) {
    batch.push({
      threadId: 'bench',
      type: types[index % 3]!,
      payload: {
        toolCallId: `call_${index}`,
        tool: 'transfer',
        arguments: {
          to: '0x90F8bf9A1C437435f3065A5A90310243E197c3b2',
          amount: `${index}.00`,
          currency: 'USD',
        },
        rule: 'treasury.dual_approval_threshold',
      },
    });
  }
  for (let start = 0; start < batch.length; start += 1000) {
    await audit.appendMany(batch.slice(start, start + 1000));
  }
  return audit.events('bench');
}

/**
 * `npm run bench -- evidence`: seal and verify bundles of 1,000 and 10,000 events (v2: with a
 * signed tree head), then the transparency-log parts on their own — the Merkle tree of 10,000
 * events, an inclusion proof, and the consistency check between bundles of 10,000 and 20,000.
 */
export async function run(): Promise<void> {
  const signer = new Ed25519Signer(generateKeyPair().privateKey);
  const keys = [signer.verifier()];
  const results: Record<number, { seal: number; verify: number; bytes: number }> = {};
  for (const count of [1_000, 10_000]) {
    const events = await buildEvents(count);
    const runs = count >= 10_000 ? 9 : 25;
    let bundle = sealEvidence({ threadId: 'bench', events }, [signer]);
    const seal = median(
      await timeRepeated(
        runs,
        () => (bundle = sealEvidence({ threadId: 'bench', events }, [signer])),
      ),
    );
    const text = JSON.stringify(bundle);
    const verify = median(
      await timeRepeated(runs, () => {
        if (!verifyEvidence(JSON.parse(text), { keys }).valid)
          throw new Error('bundle did not verify');
      }),
    );
    results[count] = { seal, verify, bytes: text.length };
    console.log(
      `evidence ${count.toLocaleString('en-US')} events (${(text.length / 1e6).toFixed(2)} MB): seal p50 ${ms(seal)} ms, verify p50 ${ms(verify)} ms`,
    );
  }
  const log = await measureLog(signer);
  console.log(
    `RESULT evidence seal_10k_ms=${ms(results[10_000]!.seal)} verify_10k_ms=${ms(results[10_000]!.verify)} tree_10k_ms=${ms(log.tree)} consistency_proof_ms=${ms(log.consistency)} since_check_ms=${ms(log.since)}`,
  );
}

async function measureLog(
  signer: Ed25519Signer,
): Promise<{ tree: number; consistency: number; since: number }> {
  const keys = [signer.verifier()];
  const events = await buildEvents(20_000);
  const first = events.slice(0, 10_000);
  const tree10k = eventTree(first);
  const tree = median(await timeRepeated(15, () => eventTree(first)));
  const headSign = median(
    await timeRepeated(25, () => sealEvidenceWithHead({ threadId: 'bench', events: [] }, [signer])),
  );
  const inclusion = median(
    await timeRepeated(200, () => {
      const index = 4_321;
      if (
        !verifyInclusion(
          index,
          tree10k.size,
          tree10k.leaf(index),
          tree10k.inclusionProof(index),
          tree10k.root(),
        )
      ) {
        throw new Error('inclusion proof did not verify');
      }
    }),
  );
  const older = sealEvidenceWithHead({ threadId: 'bench', events: first }, [signer]);
  const newer = sealEvidence({ threadId: 'bench', events, previous: older.treeHead }, [signer]);
  const tree20k = eventTree(events);
  // The check itself, as a client holding the two heads does it: one RFC 9162 consistency proof.
  const proof = tree20k.consistencyProof(10_000);
  const consistency = median(
    await timeRepeated(200, () => {
      if (!verifyConsistency(10_000, 20_000, older.treeHead.rootHash, tree20k.root(), proof)) {
        throw new Error('consistency proof did not verify');
      }
    }),
  );
  // What verifyEvidence(newer, { previous: olderHead }) adds once the newer bundle's tree is
  // built (its own verification builds it): the older head's signature, then the proof.
  const since = median(
    await timeRepeated(50, () => {
      if (checkTreeHead(older.treeHead, keys).problems.length > 0) throw new Error('bad head');
      const fresh = tree20k.consistencyProof(10_000);
      if (!verifyConsistency(10_000, 20_000, older.treeHead.rootHash, tree20k.root(), fresh)) {
        throw new Error('consistency proof did not verify');
      }
    }),
  );
  // End to end, for scale: verifying the 20,000-event bundle with each kind of older view.
  const text = JSON.stringify(newer);
  const withHead = median(
    await timeRepeated(5, () => {
      const result = verifyEvidence(JSON.parse(text), { keys, previous: older.treeHead });
      if (!result.valid) throw new Error(result.reasons.join('; '));
    }),
  );
  const olderText = JSON.stringify(older.bundle);
  const withBundle = median(
    await timeRepeated(5, () => {
      const result = verifyEvidence(JSON.parse(text), { keys, previous: JSON.parse(olderText) });
      if (!result.valid) throw new Error(result.reasons.join('; '));
    }),
  );
  console.log(
    `tree heads: Merkle tree of 10,000 events p50 ${ms(tree)} ms; seal no events (head + bundle signatures) p50 ${ms(headSign)} ms; inclusion proof make+verify p50 ${ms(inclusion)} ms`,
  );
  console.log(
    `consistency 10,000 → 20,000: proof of ${proof.length} hashes verifies in p50 ${ms(consistency)} ms; the whole check (older head's signature + proof) p50 ${ms(since)} ms; end to end, verify the 20,000-event bundle --since the head p50 ${ms(withHead)} ms, --since the 10,000-event bundle p50 ${ms(withBundle)} ms`,
  );
  return { tree, consistency, since };
}
