// The root entry re-exports the common core. Each module is also a subpath export
// (`@veridex/langgraph/audit`, `/db`, …) for everything else.
export {
  AuditLog,
  canonicalJson,
  deriveEventId,
  Ed25519Signer,
  Ed25519Verifier,
  generateKeyPair,
  HmacSigner,
  MemoryAuditStore,
  PostgresAuditStore,
  sealEvidence,
  type TraceEvent,
  type TraceEventType,
  verifyEvidence,
} from './audit/index.js';
export { createDatabase, type Database, migrate } from './db/index.js';
export { VeridexError, type VeridexErrorCode } from './errors/index.js';
