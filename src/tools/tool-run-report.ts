import { randomUUID } from 'node:crypto';
import type { AppendEventInput, AuditLog } from '../audit/audit-log.js';
import type { SecretScrubber } from '../audit/secret-scrubber.js';
import { VeridexError, type VeridexErrorCode } from '../errors/index.js';
import type { ToolRunFailure, ToolRunResult, ToolRunSuccess } from './execute-tool-types.js';
import { modelSafeText } from './model-safe-text.js';
import { scalarDetails } from './tool-call-io.js';
import {
  type EventScope,
  executedEvent,
  failedEvent,
  SECURITY_CODES,
  sanitizedEvent,
  securityFailureEvent,
  violationsEvent,
} from './tool-events.js';
import type { AnyGovernedTool } from './types.js';
import { ViolationTally } from './violation-tally.js';

/**
 * What one `runTool` call learns on its way (identity, attempts, refused side effects), turned
 * into the result and its audit events at the end.
 */
export class ToolRunReport {
  /** Side effects the sandbox refused, bounded (see {@link ViolationTally}). */
  readonly violations = new ViolationTally();
  scope: EventScope;
  idempotencyKey = '';
  attempts = 0;
  replayed = false;
  readonly #tool: AnyGovernedTool;
  readonly #audit: AuditLog | undefined;
  readonly #scrubber: SecretScrubber | undefined;

  constructor(
    tool: AnyGovernedTool,
    scope: EventScope,
    audit: AuditLog | undefined,
    scrubber: SecretScrubber | undefined,
  ) {
    this.#tool = tool;
    this.scope = scope;
    this.#audit = audit;
    this.#scrubber = scrubber;
  }

  /** Gives the call a tool call id if it has none yet (random: nothing to deduplicate). */
  ensureCallId(id: () => string = randomUUID): void {
    if (!this.scope.toolCallId) this.scope = { ...this.scope, toolCallId: id() };
  }

  /** A model-safe failure: sanitised message, secrets scrubbed, scalar details only. */
  describe(error: unknown, details: Record<string, unknown> = {}): ToolRunFailure {
    const code: VeridexErrorCode = VeridexError.is(error) ? error.code : 'tool_failed';
    const raw = error instanceof Error ? error.message : String(error);
    const text = VeridexError.is(error) ? raw : `Tool "${this.#tool.name}" failed: ${raw}`;
    return {
      ...this.#identity(),
      status: 'error',
      code,
      message: modelSafeText(text, this.#scrubber),
      details: { ...(VeridexError.is(error) ? scalarDetails(error.details) : {}), ...details },
      error,
    };
  }

  /** {@link describe} then {@link finish}. */
  fail(error: unknown, details?: Record<string, unknown>): Promise<ToolRunResult> {
    return this.finish(this.describe(error, details));
  }

  /** A success from stored or fresh parts. */
  succeed(
    parts: Pick<ToolRunSuccess, 'content' | 'output' | 'findings' | 'artifact'>,
  ): Promise<ToolRunResult> {
    const success: ToolRunSuccess = {
      toolName: this.#tool.name,
      toolCallId: this.scope.toolCallId,
      idempotencyKey: this.idempotencyKey,
      attempts: this.attempts,
      replayed: this.replayed,
      status: 'success',
      content: parts.content,
      output: parts.output,
      findings: parts.findings,
    };
    if (parts.artifact !== undefined) success.artifact = parts.artifact;
    return this.finish(success);
  }

  /** Appends the call's audit events (deterministic ids) and returns `result`. */
  async finish(result: ToolRunResult): Promise<ToolRunResult> {
    if (this.#audit === undefined) return result;
    const tool = this.#tool;
    const events: AppendEventInput[] = [];
    const violations = this.violations.total > 0 ? this.violations.summary() : undefined;
    if (violations) events.push(violationsEvent(tool, this.scope, violations));
    if (result.status === 'error') {
      const reported = result.code === 'sandbox_violation' && violations !== undefined;
      if (SECURITY_CODES.has(result.code) && !reported)
        events.push(securityFailureEvent(tool, this.scope, result));
      events.push(failedEvent(tool, this.scope, result));
    } else {
      const security = result.findings.filter((finding) => finding.kind !== 'truncated');
      if (security.length > 0) events.push(sanitizedEvent(tool, this.scope, security));
      events.push(executedEvent(tool, this.scope, result));
    }
    await this.#audit.appendMany(events);
    return result;
  }

  #identity() {
    return {
      toolName: this.#tool.name,
      toolCallId: this.scope.toolCallId,
      idempotencyKey: this.idempotencyKey,
      attempts: this.attempts,
      replayed: this.replayed,
    };
  }
}
