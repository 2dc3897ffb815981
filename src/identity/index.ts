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
} from '../audit/decision-statement.js';
export { decisionChallenge, webauthnKeyId } from '../audit/webauthn-assertion.js';
export {
  type Approver,
  type ApproverInit,
  type ApproverKey,
  type Ed25519ApproverKey,
  isActiveKey,
  type PasskeyInit,
  type WebAuthnApproverKey,
} from './approver.js';
export { type ApproverDirectory, buildApprover, sponsoredKeys } from './approver-directory.js';
export {
  APPROVERS_FORMAT,
  parseApprovers,
  parseDirectoryChangeEvents,
  serializeApprovers,
} from './approvers-file.js';
export {
  type AuthenticatedDecision,
  authenticateDecision,
  signatureProblem,
} from './authenticate-decision.js';
export {
  canonicalIdentity,
  foldText,
  identityKey,
  MAX_IDENTITY_LENGTH,
  sameIdentity,
  tryIdentityKey,
} from './canonical-identity.js';
export { CONFUSABLES_VERSION } from './confusable-prototypes.js';
export {
  checkDirectoryChangeProof,
  DIRECTORY_CHANGE_PAYLOAD_TYPE,
  type DirectoryChangeKind,
  type DirectoryChangeProof,
  type DirectoryChangeStatement,
  directoryChangeChallenge,
  directoryChangeMessage,
  type ProvingKey,
  parseDirectoryChangeProof,
  signDirectoryChange,
} from './directory-change.js';
export {
  changesForKeys,
  DIRECTORY_AUDIT_THREAD,
  type DirectoryAuthority,
  type DirectoryChangeInput,
  type DirectoryChangeRecord,
  describeChange,
  readDirectoryChanges,
  recordDirectoryChange,
} from './directory-history.js';
export {
  DEFAULT_DIRECTORY_KEY_FILE,
  DIRECTORY_ENTRY_PAYLOAD_TYPE,
  DIRECTORY_KEY_ENV,
  type DirectoryKeyOption,
  DirectorySeal,
  loadDirectorySeal,
  storedTime,
} from './directory-seal.js';
export {
  describeUnboundedEditedArguments,
  MAX_EDITED_ARGUMENTS_DEPTH,
  MAX_EDITED_ARGUMENTS_VALUES,
} from './edited-arguments-bounds.js';
export { MemoryApproverDirectory } from './memory-approver-directory.js';
export {
  PostgresApproverDirectory,
  type PostgresApproverDirectoryOptions,
  type UnsealedEntry,
} from './postgres-approver-directory.js';
export { type SignDecisionInput, signDecision } from './sign-decision.js';
export { confusableSkeleton } from './skeleton.js';
export { describeMalformedSignedDecision, MAX_REASON_LENGTH } from './statement-shape.js';
