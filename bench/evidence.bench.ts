import {
  AuditLog,
  Ed25519Signer,
  generateKeyPair,
  sealEvidence,
  type TraceEvent,
  verifyEvidence,
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

/** `npm run bench -- evidence`: seal and verify bundles of 1,000 and 10,000 events. */
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
  console.log(
    `RESULT evidence seal_10k_ms=${ms(results[10_000]!.seal)} verify_10k_ms=${ms(results[10_000]!.verify)}`,
  );
}
