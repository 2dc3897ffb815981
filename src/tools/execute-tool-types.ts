import type { AuditLog } from '../audit/audit-log.js';
import type { VeridexErrorCode } from '../errors/index.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import type { IdempotencyStore } from './idempotency-store.js';
import type { SanitizerFinding } from './sanitize-output.js';
import type { SecretsProvider } from './secrets-provider.js';
import type { ToolRegistry } from './tool-registry.js';
import type { ToolRuntime } from './types.js';

/** Idempotency settings for {@link ExecuteToolOptions.idempotency}. */
export interface IdempotencyOptions {
  store: IdempotencyStore;
  /** How long to wait for a concurrent execution of the same key (default 10 000 ms). */
  waitMs?: number;
  /**
   * Lease of a reservation (default: every attempt's timeout plus backoff plus 5 s, or
   * 5 minutes for tools without `timeoutMs`). An execution still running when its lease ends
   * is reported `in_doubt` to others rather than repeated.
   */
  leaseMs?: number;
}

/**
 * Options of the execution stage (`executeTool`): the call's identity and the runtime it
 * executes in. Public callers use `runTool` from `@veridex/langgraph/governance`, which decides
 * the call (pins, validation, policy, approvals) first and sets `proposalHash`/`approvedBy`.
 */
export interface ExecuteToolOptions {
  /** Default `default`. */
  threadId?: string;
  /** The model's tool call id. Default: random (or derived from the arguments for tools with `idempotency: 'required'`). */
  toolCallId?: string;
  /** Default: the thread id. */
  runId?: string;
  /** Turn of the audit events (default 0). */
  turnIndex?: number;
  /** Hash of the approved proposal (default: derived from tool, schema hash and arguments for idempotent tools, else `''`). */
  proposalHash?: string;
  approvedBy?: readonly string[];
  metadata?: Readonly<Record<string, unknown>>;
  /** Default: a `DenyAllSandbox` (no side effects). */
  sandbox?: Sandbox;
  /** Secrets the tool may `get` (only those it declares). */
  secrets?: SecretsProvider;
  /** Store for tools with `idempotency: 'required'` (default: one in-memory store per process). */
  idempotency?: IdempotencyStore | IdempotencyOptions;
  /** Receives `tool_executed` / `tool_failed` / `security_event` with deterministic ids. */
  audit?: AuditLog;
  /** Verifies the tool's schema pin before the call. */
  registry?: ToolRegistry;
  /** Cancels the call (run cancelled); `runTool` then throws the signal's reason. */
  signal?: AbortSignal;
  /** Output cap for the model (default 32 KiB). */
  maxOutputBytes?: number;
  /**
   * Run at most once per key even if the tool does not declare `idempotency: 'required'`
   * (the tool still receives the key). The governed tool node sets it for every call.
   */
  atMostOnce?: boolean;
  /** The LangGraph runtime handed to the tool (in-process sandboxes only). */
  runtime?: ToolRuntime;
  /**
   * The arguments as the governance planner parsed them with `tool.input` moments before, right
   * after it checked the tool's pin: the tool receives `validated.input`, without a second parse
   * or pin check.
   */
  validated?: { input: unknown };
}

/** What identifies a run-tool outcome. */
interface ToolRunBase {
  toolName: string;
  toolCallId: string;
  idempotencyKey: string;
  /** Executions attempted by this call (0 when nothing ran, e.g. invalid input or a replay). */
  attempts: number;
  /** True when the outcome came from the idempotency store instead of an execution. */
  replayed: boolean;
}

/** The tool ran (or had run under the same idempotency key) and returned valid output. */
export interface ToolRunSuccess extends ToolRunBase {
  status: 'success';
  /** Sanitised text for the `ToolMessage`. */
  content: string;
  /**
   * The validated output, for the application (not the model): as the tool returned it on a
   * fresh execution; on a replay, the copy kept at rest, with secrets and credentials scrubbed.
   */
  output: unknown;
  /**
   * Data the tool kept out of the model's view (`{ llmOutput, artifact }`), scrubbed of secrets
   * and credentials (it is stored in the checkpoint with the ToolMessage).
   */
  artifact?: unknown;
  findings: SanitizerFinding[];
}

/** A tool-level failure, safe to show the model as an error `ToolMessage`. */
export interface ToolRunFailure extends ToolRunBase {
  status: 'error';
  code: VeridexErrorCode;
  /** Sanitised, secret-free message for the model. */
  message: string;
  details: Record<string, unknown>;
  /**
   * What the failure was raised with — what the tool threw, on the execution that failed; a
   * `VeridexError` rebuilt from the ledger on a replay — for hosts that re-raise tool errors
   * (`handleToolErrors: false`). Never shown to the model, never stored.
   */
  error?: unknown;
}

/** The result of running a governed tool call. */
export type ToolRunResult = ToolRunSuccess | ToolRunFailure;
