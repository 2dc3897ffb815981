import type {
  AnyGovernedTool,
  HttpClient,
  JailedFs,
  ToolCallContext,
  ToolRuntime,
  ToolSecrets,
} from '../tools/types.js';

/** A side effect a sandbox refused. Reported even when the tool catches the error. */
export interface SandboxViolation {
  capability: 'http' | 'fs' | 'process' | 'env' | 'eval';
  /** What was attempted: a URL without query, a jail-relative path, a module. Never a secret. */
  target: string;
  reason: string;
  /**
   * `child`: reported by the tool's own sandbox process, so the child's word, not something the
   * sandbox observed in the agent's process (absent: the sandbox's own report).
   */
  reportedBy?: 'child';
}

/** One execution handed to a sandbox by `runTool` (input already validated). */
export interface SandboxRunRequest {
  tool: AnyGovernedTool;
  input: unknown;
  secrets: ToolSecrets;
  idempotencyKey: string;
  /** Aborted on timeout or cancellation; a sandbox stops the tool as well as it can. */
  signal: AbortSignal;
  context: ToolCallContext;
  /** Called for every refused side effect. */
  onViolation(violation: SandboxViolation): void;
  /** The LangGraph runtime of the call; in-process sandboxes hand it to the tool. */
  runtime?: ToolRuntime;
}

/**
 * Where a tool's `execute` runs and what side effects it can reach. `runTool` calls `run` once
 * per attempt and validates what it returns against the tool's output schema.
 * Built in: `DenyAllSandbox`, `InProcessSandbox`, `LocalProcessSandbox`, `IsolatedProcessSandbox`.
 */
export interface Sandbox {
  /** Shown in audit events, e.g. `deny_all`. */
  readonly kind: string;
  /**
   * Runs the tool; resolves with what `execute` returned.
   * @throws whatever the tool threw; VeridexError `sandbox_violation` / `sandbox_limit_exceeded`.
   */
  run(request: SandboxRunRequest): Promise<unknown>;
}

/**
 * Calls the tool's `execute` with the request's arguments and the capabilities a sandbox
 * grants: the one place that assembles `ToolExecuteArgs` for the in-process sandboxes.
 */
export function executeWithCapabilities(
  request: SandboxRunRequest,
  capabilities: { http: HttpClient; fs: JailedFs },
): Promise<unknown> {
  return request.tool.execute({
    input: request.input,
    secrets: request.secrets,
    idempotencyKey: request.idempotencyKey,
    signal: request.signal,
    context: request.context,
    http: capabilities.http,
    fs: capabilities.fs,
    ...(request.runtime ? { runtime: request.runtime } : {}),
  });
}
