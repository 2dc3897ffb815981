// Record an audited run in Postgres (embedded PGlite here), seal it into a signed evidence
// bundle, and verify it the way an auditor would: offline, with only the public key.
import {
  AuditLog,
  deriveEventId,
  Ed25519Signer,
  Ed25519Verifier,
  generateKeyPair,
  PostgresAuditStore,
  sealEvidence,
  verifyEvidence,
} from '@veridex/langgraph/audit';
import { createDatabase, migrate } from '@veridex/langgraph/db';

const db = await createDatabase({ dataDir: 'memory://' }); // or { url: process.env.DATABASE_URL }
await migrate(db);
const audit = new AuditLog({ store: new PostgresAuditStore(db) });

const threadId = 'invoice-2026-11';
await audit.append({
  threadId,
  eventId: deriveEventId(threadId, 'start'),
  type: 'run_started',
  payload: { prompt: 'Pay INV-1234' },
});
await audit.append({
  threadId,
  eventId: deriveEventId(threadId, 'done'),
  type: 'run_completed',
  payload: { output: 'Paid.' },
});

const { privateKey, publicKey } = generateKeyPair();
const bundle = sealEvidence({ threadId, events: await audit.events(threadId) }, [
  new Ed25519Signer(privateKey),
]);

const result = verifyEvidence(JSON.parse(JSON.stringify(bundle)), {
  keys: [new Ed25519Verifier(publicKey)],
});
console.log(result.valid ? 'evidence valid' : `evidence INVALID: ${result.reasons.join('; ')}`);
await db.close();
if (!result.valid) process.exit(1);
