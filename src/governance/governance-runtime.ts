import type { ToolCall } from '@langchain/core/messages';
import type { ApprovalManager } from '../approvals/index.js';
import type { AuditLog } from '../audit/index.js';
import type { PolicyEngine } from '../policy/index.js';
import type { Sandbox } from '../sandbox/index.js';
import type {
  IdempotencyOptions,
  IdempotencyStore,
  SecretsProvider,
  ToolRegistry,
  ToolRuntime,
} from '../tools/index.js';
import type { ReviewConfigs } from './review-config.js';
import type { GovernanceEventSink } from './stream-events.js';

/**
 * Everything a governed call is decided and executed with. One value, shared by every path to
 * a tool — the governed tool node, `runTool`, the LangChain and MCP converters, the createAgent
 * middleware — so no path can run a tool with less than the others.
 */
export interface GovernanceRuntime {
  /** The tools, pinned: a tool whose contract changed is `schema_pin_mismatch`. */
  registry: ToolRegistry;
  policy: PolicyEngine;
  approvals: ApprovalManager;
  audit: AuditLog;
  /** The proposing agent's identity (never counts as an approver). */
  proposer: string;
  /**
   * Records executed calls so each runs at most once (absent: each tool's in-memory ledger).
   */
  idempotency?: IdempotencyStore | IdempotencyOptions;
  /** Where tools execute (default `DenyAllSandbox`). */
  sandbox?: Sandbox;
  secrets?: SecretsProvider;
  /** Cap on tool output shown to the model (default 32 KiB). */
  maxOutputBytes?: number;
  /** How reviewers see and may decide each tool's calls (default: every decision allowed). */
  review?: ReviewConfigs;
}

/**
 * The request facts a tool sees as `context.metadata`: the plain JSON scalars (strings, finite
 * numbers, booleans, `null`) among a LangGraph `configurable`'s own data properties, without
 * LangGraph's own entries (`__…`, `checkpoint…`). Everything else is dropped, not refused — a
 * `configurable` routinely carries clients and callbacks that are none of the tool's business:
 * objects and arrays (may hold clients or credentials), functions (a tool could call back into
 * the host), symbols, bigints, `undefined`, `NaN`/`Infinity`, and getters (never invoked: a
 * getter runs host code and may answer differently each time it is read).
 */
export function scopeMetadata(
  configurable: Record<string, unknown> | undefined,
): Record<string, unknown> {
  const metadata: Record<string, unknown> = {};
  if (typeof configurable !== 'object' || configurable === null) return metadata;
  for (const key of Object.keys(configurable)) {
    if (key.startsWith('__') || key.startsWith('checkpoint')) continue;
    const descriptor = Object.getOwnPropertyDescriptor(configurable, key);
    if (descriptor === undefined || !('value' in descriptor)) continue;
    // Defined, not assigned: no key can ever reach a setter (`__…` keys are skipped above anyway).
    if (isJsonScalar(descriptor.value)) {
      Object.defineProperty(metadata, key, {
        value: descriptor.value,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
  }
  return metadata;
}

function isJsonScalar(value: unknown): boolean {
  return (
    value === null ||
    typeof value === 'string' ||
    typeof value === 'boolean' ||
    (typeof value === 'number' && Number.isFinite(value))
  );
}

/** Where one batch of calls happens: the thread, the run and the turn. */
export interface CallScope {
  threadId: string;
  runId: string;
  turnIndex: number;
  /** Scalar request facts for the tool (`context.metadata`). */
  metadata?: Readonly<Record<string, unknown>>;
  signal?: AbortSignal;
  /** The LangGraph runtime each call's tool receives (state, toolCallId, config, …). */
  runtimeFor?: (call: ToolCall) => ToolRuntime;
  /** Where governance events go (LangGraph's `writer`, for `streamMode: 'custom'`). */
  emit?: GovernanceEventSink;
}
