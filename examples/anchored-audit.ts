// Anchor the audit log outside the database: seal bundles that link to each other, publish
// signed tree heads to a head file, and catch an insider who rewrites a row and recomputes the
// hash chain — with an older bundle, and with the published heads.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AuditLog,
  canonicalJson,
  Ed25519Signer,
  FileHeadWitness,
  GENESIS_HASH,
  generateKeyPair,
  hashTraceEvent,
  PostgresAuditStore,
  readHeadFile,
  sealAuditThread,
  sealEvidence,
  TransparencyLog,
  verifyEvidence,
  verifyWitnessedHeads,
} from '@veridex/langgraph/audit';
import { createDatabase, migrate } from '@veridex/langgraph/db';

const dir = mkdtempSync(join(tmpdir(), 'veridex-anchored-'));
const headFile = join(dir, 'heads.jsonl'); // ship this file off the database host
const db = await createDatabase({ dataDir: 'memory://' });
await migrate(db);
const signer = new Ed25519Signer(generateKeyPair().privateKey);
const keys = [signer.verifier()];
const audit = new AuditLog({
  store: new PostgresAuditStore(db),
  witnesses: [new FileHeadWitness(headFile, { keys })],
});

const threadId = 'payout-42';
await audit.append({ threadId, type: 'run_started', payload: { prompt: 'Pay Acme 50,000' } });
await audit.append({
  threadId,
  type: 'approval_decided',
  payload: { approvalId: 'apr_1', approver: 'alice@ops.example', decision: 'approve' },
});
// Seal: the bundle carries a signed tree head, which also goes to the head file.
const { bundle: older } = await sealAuditThread(audit, { threadId }, [signer]);
// An operator job: sign every grown thread and a global head over all of them.
await new TransparencyLog({ audit, signers: [signer] }).publish();

await audit.append({ threadId, type: 'run_completed', payload: { output: 'Paid.' } });
const { bundle: newer } = await sealAuditThread(audit, { threadId }, [signer]);
const honest = verifyEvidence(newer, { keys, previous: older });
console.log(`newer bundle extends the older one: ${honest.valid}`);

// The insider: alice becomes cfo@corp, every hash is recomputed, the rows are written back.
let previousEventHash = GENESIS_HASH;
for (const [index, event] of (await audit.events(threadId)).entries()) {
  const payload =
    event.type === 'approval_decided' ? { ...event.payload, approver: 'cfo@corp' } : event.payload;
  const linked = { ...event, payload, previousEventHash };
  previousEventHash = hashTraceEvent(linked);
  await db.query(
    'UPDATE veridex_audit_events SET payload = $3, previous_hash = $4, hash = $5 WHERE thread_id = $1 AND seq = $2',
    [threadId, index + 1, canonicalJson(payload), linked.previousEventHash, previousEventHash],
  );
}
await db.query('UPDATE veridex_audit_heads SET hash = $2 WHERE thread_id = $1', [
  threadId,
  previousEventHash,
]);

const chainAlone = await audit.verify(threadId);
const forged = sealEvidence({ threadId, events: await audit.events(threadId) }, [signer]);
console.log(
  `chain alone says valid: ${chainAlone.valid}; re-sealed bundle alone valid: ${verifyEvidence(forged, { keys }).valid}`,
);
const sinceOlder = verifyEvidence(forged, { keys, previous: older });
console.log(`against the older bundle: ${sinceOlder.valid ? 'VALID' : sinceOlder.reasons[0]}`);
const heads = readHeadFile(headFile).map((entry) => ({ at: entry.line, value: entry.value }));
const witnessed = await verifyWitnessedHeads(audit, heads, { keys });
console.log(
  `against the published heads: ${witnessed.valid ? 'CONSISTENT' : witnessed.first?.reason}`,
);

await db.close();
rmSync(dir, { recursive: true, force: true });
if (!honest.valid || sinceOlder.valid || witnessed.valid) process.exit(1);
