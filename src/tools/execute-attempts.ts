import { VeridexError } from '../errors/index.js';
import type { Sandbox, SandboxViolation } from '../sandbox/sandbox.js';
import { isGraphBubbleUp } from './graph-signals.js';
import { isRetryable } from './retryable-tool-error.js';
import { ExecutionScope, runInScope } from './secret-ref.js';
import { noSecrets, type SecretsProvider } from './secrets-provider.js';
import type { AnyGovernedTool, ToolCallContext, ToolRuntime } from './types.js';

/** One call's execution: the tool, where it runs, and what it gets. */
export interface AttemptsInput {
  tool: AnyGovernedTool;
  sandbox: Sandbox;
  input: unknown;
  idempotencyKey: string;
  context: ToolCallContext;
  secrets: SecretsProvider | undefined;
  signal: AbortSignal | undefined;
  onViolation(violation: SandboxViolation): void;
  runtime?: ToolRuntime | undefined;
}

/** How the attempts ended. `error` is what the last attempt threw. */
export type AttemptsOutcome =
  | { ok: true; value: unknown; attempts: number }
  | { ok: false; error: unknown; attempts: number; timedOut: boolean };

/**
 * Runs the tool in its sandbox up to `retry.attempts` times: each attempt gets its own
 * secrets scope and, with `timeoutMs`, an abort signal that fires on expiry (the attempt then
 * fails with `tool_timeout` even if the tool ignores the signal). Only errors marked
 * retryable are retried, after `backoffMs × 2^(attempt-1)`.
 *
 * @throws LangGraph bubble-ups (interrupts, parent commands) untouched, the caller's abort
 * reason when `signal` aborts, and `db_unavailable` raised inside the tool.
 */
export async function executeAttempts(run: AttemptsInput): Promise<AttemptsOutcome> {
  const { tool } = run;
  const attempts = tool.retry?.attempts ?? 1;
  for (let attempt = 1; ; attempt++) {
    try {
      return { ok: true, value: await attemptOnce(run), attempts: attempt };
    } catch (error) {
      if (isGraphBubbleUp(error)) throw error;
      if (run.signal?.aborted && error === run.signal.reason) throw error;
      if (VeridexError.is(error, 'db_unavailable')) throw error;
      const timedOut = VeridexError.is(error, 'tool_timeout');
      if (timedOut || attempt >= attempts || !isRetryable(error)) {
        return { ok: false, error, attempts: attempt, timedOut };
      }
      await sleep((tool.retry?.backoffMs ?? 0) * 2 ** (attempt - 1), run.signal);
    }
  }
}

async function attemptOnce(run: AttemptsInput): Promise<unknown> {
  const { tool, sandbox } = run;
  const scope = new ExecutionScope(tool.name);
  const declared = tool.secrets ?? NONE_DECLARED;
  const secrets = run.secrets
    ? run.secrets.forExecution(tool.name, declared, scope)
    : noSecrets(tool.name, declared, scope);
  const outer = run.signal;
  const timeoutMs = tool.timeoutMs;
  // The attempt's signal: the caller's own when there is no timeout; otherwise (or when the
  // caller gave none) a controller of the attempt, which the caller's abort is forwarded to.
  const controller = timeoutMs === undefined && outer ? undefined : new AbortController();
  const signal = controller ? controller.signal : (outer as AbortSignal);
  const request = {
    tool,
    input: run.input,
    secrets,
    idempotencyKey: run.idempotencyKey,
    signal,
    context: run.context,
    onViolation: run.onViolation,
    ...(run.runtime ? { runtime: run.runtime } : {}),
  };
  // A secret is revealed only inside the scope of the execution it was handed to; a tool that
  // declares none gets none, so it needs no scope to enter.
  const start = (): Promise<unknown> =>
    declared.length > 0 ? runInScope(scope, () => sandbox.run(request)) : sandbox.run(request);
  if (timeoutMs === undefined && outer === undefined) {
    try {
      return await start();
    } finally {
      scope.close();
    }
  }
  const forward = controller && outer ? () => controller.abort(outer.reason) : undefined;
  if (forward) {
    if (outer!.aborted) forward();
    else outer!.addEventListener('abort', forward, { once: true });
  }
  const timer =
    timeoutMs === undefined
      ? undefined
      : setTimeout(() => controller!.abort(timeoutError(tool.name, timeoutMs)), timeoutMs);
  // Racing the abort means a tool that ignores its signal still ends the call on time.
  let fire: (() => void) | undefined;
  const stopped = new Promise<never>((_, reject) => {
    fire = () => reject(signal.reason);
    if (signal.aborted) fire();
    else signal.addEventListener('abort', fire, { once: true });
  });
  stopped.catch(() => undefined);
  try {
    return await Promise.race([start(), stopped]);
  } finally {
    clearTimeout(timer);
    // The caller's signal outlives the attempt (LangGraph's lasts the whole run): nothing of
    // this attempt may stay registered on it.
    if (forward) outer!.removeEventListener('abort', forward);
    signal.removeEventListener('abort', fire!);
    scope.close();
  }
}

const NONE_DECLARED: readonly string[] = Object.freeze([]);

function timeoutError(name: string, timeoutMs: number): VeridexError {
  return new VeridexError(
    'tool_timeout',
    `Tool "${name}" did not finish within ${timeoutMs} ms and was aborted. Try again later or with a smaller request.`,
    { details: { tool: name, timeoutMs } },
  );
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', abort);
      resolve();
    }, ms);
    const abort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    if (signal?.aborted) abort();
    else signal?.addEventListener('abort', abort, { once: true });
  });
}
