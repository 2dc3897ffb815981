import type { AnyGovernedTool, ToolCallContext, ToolSecrets } from '../tools/types.js';

/** A side effect a sandbox refused. Reported even when the tool catches the error. */
export interface SandboxViolation {
  capability: 'http' | 'fs' | 'process' | 'env' | 'eval';
  /** What was attempted: a URL without query, a jail-relative path, a module. Never a secret. */
  target: string;
  reason: string;
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
}

/**
 * Where a tool's `execute` runs and what side effects it can reach. `runTool` calls `run` once
 * per attempt and validates what it returns against the tool's output schema.
 * Built in: `DenyAllSandbox`, `InProcessSandbox`, `LocalProcessSandbox`.
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
