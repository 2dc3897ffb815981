/**
 * Every stable error code the library can raise. Codes are part of the public API:
 * callers branch on them, so a code is never renamed or reused for another meaning.
 * Add new codes at the end of their group.
 */
export const ERROR_CODES = [
  // configuration and usage
  'config_invalid',
  'canonical_json_invalid',
  // database
  'db_unavailable',
  'db_query_failed',
  'migration_mismatch',
  'db_in_use',
  'db_not_migrated',
  // checkpoints
  'checkpoint_invalid',
  'thread_not_found',
  'thread_not_suspended',
  // audit and evidence
  'audit_chain_broken',
  'evidence_invalid',
  'signer_key_invalid',
  'audit_log_inconsistent',
  'trust_file_insecure',
  // tools
  'tool_definition_invalid',
  'tool_not_found',
  'schema_pin_mismatch',
  'input_invalid',
  'output_invalid',
  'tool_failed',
  'tool_timeout',
  'secret_not_found',
  'secret_access_denied',
  'idempotency_conflict',
  'idempotency_in_doubt',
  'secret_too_weak',
  'idempotency_busy',
  'tool_review_required',
  'tool_name_clash',
  // sandbox
  'sandbox_violation',
  'sandbox_limit_exceeded',
  'sandbox_unavailable',
  // policy and approvals
  'policy_denied',
  'policy_error',
  'rate_limited',
  'approval_not_found',
  'approval_rejected',
  'approval_already_decided',
  'approval_expired',
  'approver_not_allowed',
  'approver_duplicate',
  'proposer_cannot_approve',
  'proposal_mutation_detected',
  'resume_payload_invalid',
  'decision_not_allowed',
  'turn_rejected',
  'tool_call_id_reused',
  'approval_required',
  'identity_invalid',
  'identity_ambiguous',
  'approver_unknown',
  'directory_read_only',
  'decision_unsigned',
  'decision_signature_invalid',
  'decision_key_unknown',
  'decision_mismatch',
  'decision_nonce_reused',
  'decision_stale',
  'approval_unproven',
  'proposal_tampered',
  // treasury
  'ceiling_exceeded',
  'sanctions_hit',
  'insufficient_funds',
  'transfer_in_doubt',
  'time_locked',
  // context, envelopes, budgets
  'context_budget_exceeded',
  'envelope_invalid',
  'budget_exhausted',
  // memory
  'memory_write_denied',
  // adapters
  'import_invalid',
  'import_conflict',
  'run_not_found',
  'import_too_large',
  // approvals inbox (HTTP service, sessions, passkeys, webhooks)
  'auth_required',
  'login_invalid',
  'csrf_rejected',
  'host_not_allowed',
  'challenge_invalid',
  'passkey_invalid',
  'invitation_invalid',
  'admin_required',
  'session_mismatch',
  'enrolment_unproven',
  'invitation_not_allowed',
  'input_too_large',
] as const;

/** A stable, machine-readable error code. */
export type VeridexErrorCode = (typeof ERROR_CODES)[number];
