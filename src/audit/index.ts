export { AuditBatch, type AuditSink } from './audit-batch.js';
export {
  type AppendEventInput,
  type AuditListener,
  AuditLog,
  type AuditLogOptions,
} from './audit-log.js';
export type { AuditStore, ChainableEvent } from './audit-store.js';
export { type CanonicalValue, canonicalJson } from './canonical-json.js';
export {
  argumentsHash,
  DECISION_PAYLOAD_TYPE,
  type DecisionKind,
  type DecisionStatement,
  decisionSigningMessage,
  isSignedDecision,
  type PasskeyAssertionParts,
  reasonHash,
  type SignedDecision,
} from './decision-statement.js';
export { verbatimDigests } from './digest-fields.js';
export { type DsseEnvelope, decodeBase64Strict, encodeBase64, preAuthEncoding } from './dsse.js';
export {
  type Ed25519KeyPair,
  Ed25519Signer,
  Ed25519Verifier,
  ed25519KeyId,
  generateKeyPair,
} from './ed25519-signer.js';
export { verifyEd25519 } from './ed25519-verify.js';
export {
  EVENT_INCLUSION_FORMAT,
  type EventInclusionProof,
  proveEventInclusion,
  verifyEventInclusion,
} from './event-inclusion.js';
export { eventLeafHash, eventTree } from './event-tree.js';
export {
  EVIDENCE_FORMAT,
  EVIDENCE_FORMAT_V1,
  EVIDENCE_PAYLOAD_TYPE,
  type EvidenceBody,
  type EvidenceLog,
} from './evidence-body.js';
export { latestEvidence, storeEvidence } from './evidence-store.js';
export {
  FileHeadWitness,
  type FileHeadWitnessOptions,
  type HeadFileEntry,
  readHeadFile,
} from './file-head-witness.js';
export {
  checkWitnesses,
  type HeadWitness,
  publishHead,
  submissionProblem,
  witnessRefusal,
} from './head-witness.js';
export { HMAC_KEY_PREFIX, HmacSigner, MIN_HMAC_SECRET_BYTES } from './hmac-signer.js';
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
export { inconsistency } from './log-consistency.js';
export { MemoryAuditStore } from './memory-audit-store.js';
export { MemoryHeadWitness } from './memory-head-witness.js';
export { rootFromInclusion, verifyConsistency, verifyInclusion } from './merkle-proofs.js';
export {
  EMPTY_ROOT,
  isHashHex,
  leafHash,
  MerkleTree,
  nodeHash,
  splitPoint,
} from './merkle-tree.js';
export { PostgresAuditStore } from './postgres-audit-store.js';
export { PostgresTreeHeadStore } from './postgres-tree-head-store.js';
export {
  type CredentialKind,
  type CredentialRedaction,
  redactCredentials,
} from './redact-credentials.js';
export {
  type EvidenceBundle,
  type SealEvidenceInput,
  type SealedBundle,
  sealEvidence,
  sealEvidenceWithHead,
} from './seal-evidence.js';
export { sealAuditThread } from './seal-thread.js';
export {
  type FingerprintKeys,
  type SecretFingerprint,
  SecretFingerprintStore,
} from './secret-fingerprint-store.js';
export {
  MIN_PERSISTED_SECRET_BITS,
  MIN_PERSISTED_SECRET_LENGTH,
  weakSecretReason,
} from './secret-forms.js';
export {
  type AttachOptions,
  MIN_SECRET_LENGTH,
  type ScrubReport,
  SecretScrubber,
} from './secret-scrubber.js';
export { contentHash, hmacSha256, sha256Hex } from './sha256.js';
export {
  type EvidenceSigner,
  type EvidenceVerifier,
  inKeyNamespace,
  KEY_ID_NAMESPACE,
} from './signer.js';
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
export {
  type PublishedHeads,
  TransparencyLog,
  type TransparencyLogOptions,
} from './transparency-log.js';
export {
  checkTreeHead,
  describeHead,
  headLeafHash,
  headLog,
  type SignedTreeHead,
  signTreeHead,
  TREE_HEAD_FORMAT,
  TREE_HEAD_PAYLOAD_TYPE,
  type TreeHead,
  type TreeHeadCheck,
  treeHeadMessage,
  unsignedHead,
} from './tree-head.js';
export { MemoryTreeHeadStore, type TreeHeadStore } from './tree-head-store.js';
export { assertTrustedFile, assertTrustedIfFile } from './trust-files.js';
export { type ChainVerification, verifyChain } from './verify-chain.js';
export { checkDecisions, type DecisionCheck, type TrustedApprover } from './verify-decisions.js';
export {
  assertValidEvidence,
  type EvidenceLogCheck,
  type EvidenceVerification,
  type SignatureCheck,
  type VerifyEvidenceOptions,
  verifyEvidence,
} from './verify-evidence.js';
export { checkExecutedCalls, type ExecutionCheckOptions } from './verify-executions.js';
export {
  verifyWitnessedHeads,
  type WitnessedHeadCheck,
  type WitnessVerification,
} from './verify-witnessed-heads.js';
export {
  checkWebAuthnAssertion,
  coseKey,
  decisionChallenge,
  PASSKEY_ALGORITHMS,
  type WebAuthnAssertion,
  type WebAuthnCheck,
  type WebAuthnExpectation,
  webauthnKeyId,
} from './webauthn-assertion.js';
