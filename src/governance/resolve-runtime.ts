import { ApprovalManager } from '../approvals/index.js';
import { AuditLog, PostgresAuditStore } from '../audit/index.js';
import type { Database } from '../db/index.js';
import { PolicyEngine } from '../policy/index.js';
import type { Sandbox } from '../sandbox/index.js';
import {
  type AnyGovernedTool,
  type IdempotencyOptions,
  type IdempotencyStore,
  PostgresIdempotencyStore,
  type SecretsProvider,
  ToolRegistry,
} from '../tools/index.js';
import type { GovernanceRuntime } from './governance-runtime.js';
import { checkReviewConfigs, type ReviewConfigs } from './review-config.js';

/**
 * What a path to a tool may be given; every field has a secure default. Shared by
 * `governedToolNode`, `runTool`, `toLangChainTool`, `serveMcp` and the createAgent middleware.
 */
export interface GovernanceOptions {
  /**
   * The database the defaults persist in (run `migrate()` first): the audit log, approvals
   * (with the approver directory) and the at-most-once ledger then survive restarts and are
   * shared with other processes. Without one they live in this process only.
   */
  db?: Database;
  /** Default: safety-class defaults only (read/write allowed, financial → one approval, privileged → two). */
  policy?: PolicyEngine;
  /** Default: an `ApprovalManager` over `db` (else in memory). */
  approvals?: ApprovalManager;
  /** Default: an `AuditLog` over `db` (else in memory). */
  audit?: AuditLog;
  /** Pins the tools (default: a registry pinning them now). */
  registry?: ToolRegistry;
  /** The proposing agent's identity: never counts as an approver (default `agent`). */
  agentId?: string;
  /**
   * The at-most-once ledger. Default: `PostgresIdempotencyStore` over `db` or over a
   * database-backed `approvals`; only without any database an in-memory ledger per tool
   * instance, shared by every path in this process that runs that tool and forgotten on restart.
   */
  idempotency?: IdempotencyStore | IdempotencyOptions;
  /** Where tools execute. Default: `DenyAllSandbox` (no network, no file system). */
  sandbox?: Sandbox;
  secrets?: SecretsProvider;
  /** Cap on tool output shown to the model (default 32 KiB). */
  maxOutputBytes?: number;
  /**
   * How reviewers see and may decide each tool's calls (`allowedDecisions`, `argsSchema`,
   * `description`), by tool name — LangChain's `interruptOn` entries without the question of
   * whether to ask, which the policy answers (`rules.requireApproval`).
   */
  review?: ReviewConfigs;
}

/** Fills every default of {@link GovernanceOptions} for `tools`. */
export function resolveRuntime(
  options: GovernanceOptions,
  tools: readonly AnyGovernedTool[] | ToolRegistry,
): GovernanceRuntime {
  const { db } = options;
  checkReviewConfigs(options.review, 'review');
  const registry =
    options.registry ??
    (tools instanceof ToolRegistry ? tools : new ToolRegistry().register(...tools));
  const audit = options.audit ?? new AuditLog(db ? { store: new PostgresAuditStore(db) } : {});
  const approvals = options.approvals ?? new ApprovalManager({ audit, ...(db ? { db } : {}) });
  const durable = db ?? approvals.database;
  if (options.secrets) options.secrets.registerWith(audit.scrubber);
  return {
    registry,
    policy: options.policy ?? new PolicyEngine({ audit }),
    approvals,
    audit,
    proposer: options.agentId ?? 'agent',
    ...(options.idempotency || durable
      ? { idempotency: options.idempotency ?? new PostgresIdempotencyStore(durable as Database) }
      : {}),
    ...(options.sandbox ? { sandbox: options.sandbox } : {}),
    ...(options.secrets ? { secrets: options.secrets } : {}),
    ...(options.maxOutputBytes ? { maxOutputBytes: options.maxOutputBytes } : {}),
    ...(options.review ? { review: options.review } : {}),
  };
}
