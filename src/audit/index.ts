export { AuditBatch, type AuditSink } from './audit-batch.js';
export { type AppendEventInput, AuditLog, type AuditLogOptions } from './audit-log.js';
export type { AuditStore, ChainableEvent } from './audit-store.js';
export { type CanonicalValue, canonicalJson } from './canonical-json.js';
export { type DsseEnvelope, decodeBase64Strict, encodeBase64, preAuthEncoding } from './dsse.js';
export {
  type Ed25519KeyPair,
  Ed25519Signer,
  Ed25519Verifier,
  ed25519KeyId,
  generateKeyPair,
} from './ed25519-signer.js';
export { EVIDENCE_FORMAT, EVIDENCE_PAYLOAD_TYPE, type EvidenceBody } from './evidence-body.js';
export { HmacSigner, MIN_HMAC_SECRET_BYTES } from './hmac-signer.js';
export {
  DEFAULT_KEY_DIR,
  type KeyPairFiles,
  loadOrCreateSigner,
  PRIVATE_KEY_FILE,
  PUBLIC_KEY_FILE,
  privateKeyToPem,
  publicKeyToPem,
  readPrivateKey,
  readPublicKey,
  writeKeyPair,
} from './key-files.js';
export { MemoryAuditStore } from './memory-audit-store.js';
export { PostgresAuditStore } from './postgres-audit-store.js';
export {
  type CredentialKind,
  type CredentialRedaction,
  redactCredentials,
} from './redact-credentials.js';
export { type EvidenceBundle, type SealEvidenceInput, sealEvidence } from './seal-evidence.js';
export { MIN_SECRET_LENGTH, type ScrubReport, SecretScrubber } from './secret-scrubber.js';
export { contentHash, hmacSha256, sha256Hex } from './sha256.js';
export type { EvidenceSigner, EvidenceVerifier } from './signer.js';
export {
  deriveEventId,
  type EventPayload,
  GENESIS_HASH,
  hashTraceEvent,
  TRACE_EVENT_TYPES,
  type TraceEvent,
  type TraceEventType,
  type UnhashedTraceEvent,
} from './trace-event.js';
export { type ChainVerification, verifyChain } from './verify-chain.js';
export {
  assertValidEvidence,
  type EvidenceVerification,
  type SignatureCheck,
  type VerifyEvidenceOptions,
  verifyEvidence,
} from './verify-evidence.js';
