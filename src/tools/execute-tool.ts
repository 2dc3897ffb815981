import { randomUUID } from 'node:crypto';
import { type ScrubReport, SecretScrubber } from '../audit/secret-scrubber.js';
import { VeridexError, type VeridexErrorCode } from '../errors/index.js';
import { DenyAllSandbox } from '../sandbox/deny-all-sandbox.js';
import { type AttemptsOutcome, executeAttempts } from './execute-attempts.js';
import type { ExecuteToolOptions, ToolRunResult, ToolRunSuccess } from './execute-tool-types.js';
import { isGraphBubbleUp } from './graph-signals.js';
import { callFingerprint, idempotencyKeyFor } from './idempotency-key.js';
import { idempotencySettings } from './idempotency-settings.js';
import type { IdempotencyStore, ReserveOutcome } from './idempotency-store.js';
import { reserveOrWait } from './reserve-key.js';
import { sanitizeOutput } from './sanitize-output.js';
import { summarizeIssues } from './summarize-issues.js';
import { parseSync, splitArtifact, toArguments } from './tool-call-io.js';
import { reviewHold } from './tool-registry.js';
import { ToolRunReport } from './tool-run-report.js';
import type { AnyGovernedTool, ToolCallContext } from './types.js';

const defaultSandbox = new DenyAllSandbox();
const NO_APPROVERS: readonly string[] = Object.freeze([]);
const NO_METADATA: Readonly<Record<string, unknown>> = Object.freeze({});

type StoredSuccess = Pick<ToolRunSuccess, 'content' | 'output' | 'findings' | 'artifact'>;

/**
 * The execution stage of a governed tool call — run only for a call the governance pipeline
 * (`src/governance/`: pins, validation, policy, approvals) has allowed; every public path
 * (`runTool`, the governed tool node, the converters, MCP) goes through that pipeline first.
 * Not exported from the package: calling it directly would skip policy. Pin check (with `registry`) → input validation → idempotency
 * reserve (`idempotency: 'required'`) → sandbox run with timeout and retries → output
 * validation → sanitiser → idempotency commit → audit events (`tool_executed`, `tool_failed`,
 * `security_event`, with deterministic ids).
 *
 * In doubt: a key left `executing` by a crash (lease expired), a timeout, or a tool that
 * throws `idempotency_in_doubt` / `transfer_in_doubt` is never executed again blindly. The
 * tool's `recover` (if any) is asked what happened: `executed` settles the key with its output,
 * `not_executed` releases it and the call executes, `unknown` leaves it for an operator.
 *
 * Tool-level failures come back as `{ status: 'error', code, message }`, the message safe for
 * the model. It throws only what must stop the graph step: LangGraph interrupts and other
 * bubble-ups raised inside the tool (untouched; the reservation is released so the re-run
 * after resume executes), the caller's abort reason, infrastructure failures
 * (`db_unavailable` from the idempotency store, the audit log or the tool), and
 * `idempotency_busy` (another execution of this call holds its key — e.g. a worker that died
 * mid-execution, until its lease runs out), so the step fails and stays resumable instead of
 * checkpointing a wrong answer.
 *
 */
export async function executeTool(
  tool: AnyGovernedTool,
  rawArguments: unknown,
  options: ExecuteToolOptions = {},
): Promise<ToolRunResult> {
  options.signal?.throwIfAborted();
  const threadId = options.threadId ?? 'default';
  const scrubber = options.audit?.scrubber ?? options.secrets?.scrubber;
  if (options.secrets && options.audit) options.secrets.registerWith(options.audit.scrubber);
  const scope = {
    threadId,
    toolCallId: options.toolCallId ?? '',
    runId: options.runId ?? threadId,
    turnIndex: options.turnIndex ?? 0,
  };
  const report = new ToolRunReport(tool, scope, options.audit, scrubber);

  // 1. The pin: the tool must still be the contract that was registered (the planner checked
  // it moments ago when it hands over the arguments it validated).
  const pinProblem = options.validated
    ? undefined
    : (options.registry?.check(tool) ?? reviewHold(tool));
  if (pinProblem) {
    report.ensureCallId();
    return report.fail(pinProblem);
  }

  // 2. Arguments, validated before anything runs (by the planner, or here).
  let input: unknown;
  if (options.validated) input = options.validated.input;
  else {
    const raw = toArguments(rawArguments);
    const parsed = parseSync(tool.input, raw) ?? (await tool.input.safeParseAsync(raw));
    if (!parsed.success) {
      report.ensureCallId();
      const summary = summarizeIssues(parsed.error.issues);
      return report.fail(
        new VeridexError(
          'input_invalid',
          `Invalid arguments for tool "${tool.name}": ${summary}. Fix the arguments and call the tool again.`,
          { details: { tool: tool.name, issues: parsed.error.issues.length } },
        ),
      );
    }
    input = parsed.data;
  }

  // 3. Identity: deterministic for idempotent tools, so a re-run gets the same key.
  // `atMostOnce` gives any tool the reserve/commit discipline (the governed tool node uses it so
  // that no allowed call runs twice when LangGraph re-runs the node).
  const required = tool.idempotency === 'required' || options.atMostOnce === true;
  const fingerprint = callFingerprint(tool, input);
  const proposalHash = options.proposalHash ?? '';
  if (required) report.ensureCallId(() => `direct_${fingerprint.slice(0, 24)}`);
  else report.ensureCallId();
  const toolCallId = report.scope.toolCallId;
  const idempotencyKey = idempotencyKeyFor({ threadId, toolCallId });
  report.idempotencyKey = idempotencyKey;
  const context: ToolCallContext = {
    threadId,
    toolCallId,
    runId: scope.runId,
    proposalHash,
    approvedBy: options.approvedBy ?? NO_APPROVERS,
    metadata: options.metadata ?? NO_METADATA,
  };

  // 4. At most once per key.
  const idempotency = required ? idempotencySettings(tool, options.idempotency) : undefined;
  const owner = required ? randomUUID() : '';
  if (idempotency) {
    let reservation: Exclude<ReserveOutcome, { status: 'busy' }>;
    try {
      const reserve = { owner, toolName: tool.name, fingerprint, leaseMs: idempotency.leaseMs };
      const reserveKey = () =>
        reserveOrWait(
          idempotency.store,
          idempotencyKey,
          reserve,
          idempotency.waitMs,
          options.signal,
        );
      reservation = checkFingerprint(await reserveKey(), fingerprint, tool);
      // 4a. An in-doubt key whose tool can find out what happened (e.g. ask the payment rail).
      // Two recoveries racing on one key: the loser's resolve conflicts, and it reads again.
      for (let round = 0; reservation.status === 'in_doubt' && tool.recover && round < 3; round++) {
        const recovered = await recoverInDoubt(tool, input, idempotencyKey, context, {
          store: idempotency.store,
          report,
          options,
          scrubber,
        });
        if (recovered !== 'retry') return recovered;
        reservation = checkFingerprint(await reserveKey(), fingerprint, tool);
      }
    } catch (error) {
      // A conflict is this call's answer (another call ran under its key); `idempotency_busy`
      // is not — it is thrown, like db_unavailable.
      if (VeridexError.is(error, 'idempotency_conflict')) return report.fail(error);
      throw error;
    }
    if (reservation.status !== 'acquired') {
      report.replayed = reservation.status !== 'in_doubt';
      if (reservation.status === 'completed')
        return report.succeed(reservation.record.result as StoredSuccess);
      if (reservation.status === 'failed') {
        const stored = reservation.record.error!;
        return report.fail(new VeridexError(stored.code as VeridexErrorCode, stored.message));
      }
      return report.fail(inDoubtError(tool, idempotencyKey));
    }
    try {
      await idempotency.store.markExecuting(idempotencyKey, owner, idempotency.leaseMs);
    } catch (error) {
      // Our reservation lapsed and another execution took the key over: it is theirs now.
      if (VeridexError.is(error, 'idempotency_conflict')) return report.fail(error);
      throw error;
    }
  }

  // 5. Execution in the sandbox, with timeout and retries.
  let outcome: AttemptsOutcome;
  try {
    outcome = await executeAttempts({
      tool,
      sandbox: options.sandbox ?? defaultSandbox,
      input,
      idempotencyKey,
      context,
      secrets: options.secrets,
      signal: options.signal,
      onViolation: (violation) => report.violations.add(violation),
      runtime: options.runtime,
    });
  } catch (error) {
    // An interrupt means "ask a human, then run this node again": nothing happened to keep.
    // A cancellation may have stopped the effect midway: in doubt. With db_unavailable the
    // store cannot be told; the lease expiry turns the key in_doubt for whoever comes next.
    if (idempotency && isGraphBubbleUp(error))
      await idempotency.store.release(idempotencyKey, owner);
    else if (idempotency && !VeridexError.is(error, 'db_unavailable')) {
      await idempotency.store.markInDoubt(idempotencyKey, owner);
    }
    throw error;
  }
  report.attempts = outcome.attempts;
  if (!outcome.ok) {
    const failure = report.describe(outcome.error);
    // A timeout, or a tool saying it cannot tell whether its effect happened: in doubt.
    const inDoubt =
      outcome.timedOut ||
      VeridexError.is(outcome.error, 'idempotency_in_doubt', 'transfer_in_doubt');
    if (idempotency && inDoubt) await idempotency.store.markInDoubt(idempotencyKey, owner);
    else if (idempotency) await idempotency.store.fail(idempotencyKey, owner, failure);
    return report.finish(failure);
  }

  // 6. Output: validated, then sanitised for the model.
  const produced = await storedOutput(tool, outcome.value, options, scrubber);
  if (!produced.ok) {
    const failure = report.describe(produced.error);
    if (idempotency) await idempotency.store.fail(idempotencyKey, owner, failure);
    return report.finish(failure);
  }
  if (idempotency) await idempotency.store.commit(idempotencyKey, owner, produced.stored);
  return report.succeed(produced.fresh);
}

/**
 * A tool's raw result, validated against its output schema and sanitised for the model.
 * `stored` is what goes to rest — the idempotency ledger (and, through the ToolMessage, the
 * checkpoint): its output and artifact pass the scrubber, so no registered secret or
 * credential is kept. `fresh` hands the caller of this execution the validated output as the
 * tool returned it (a replay later gets the scrubbed copy).
 */
async function storedOutput(
  tool: AnyGovernedTool,
  value: unknown,
  options: ExecuteToolOptions,
  scrubber: SecretScrubber | undefined,
): Promise<
  { ok: true; stored: StoredSuccess; fresh: StoredSuccess } | { ok: false; error: VeridexError }
> {
  const { llmOutput, artifact, hasArtifact } = splitArtifact(value);
  const output = parseSync(tool.output, llmOutput) ?? (await tool.output.safeParseAsync(llmOutput));
  if (!output.success) {
    const error = new VeridexError(
      'output_invalid',
      `Tool "${tool.name}" returned output that does not match its output schema (${summarizeIssues(output.error.issues)}). This is a bug in the tool, not in the call.`,
      { details: { tool: tool.name } },
    );
    return { ok: false, error };
  }
  const sanitized = sanitizeOutput(output.data, {
    ...(options.maxOutputBytes ? { maxBytes: options.maxOutputBytes } : {}),
    ...(scrubber ? { scrubber } : {}),
  });
  const atRest = scrubber ?? credentialsOnly;
  const removed: ScrubReport = { secrets: [], credentials: [] };
  const stored: StoredSuccess = {
    content: sanitized.content,
    output: atRest.scrub(output.data),
    findings: sanitized.findings,
    ...(hasArtifact ? { artifact: atRest.scrub(artifact, removed) } : {}),
  };
  // The caller of this execution gets the artifact as the tool returned it (a Buffer stays a
  // Buffer) when scrubbing removed nothing from it; a replay gets the stored copy.
  const unchanged = removed.secrets.length === 0 && removed.credentials.length === 0;
  const fresh: StoredSuccess = {
    content: stored.content,
    output: output.data,
    findings: stored.findings,
    ...(hasArtifact ? { artifact: unchanged ? artifact : stored.artifact } : {}),
  };
  return { ok: true, stored, fresh };
}

// Without a scrubber of the call's secrets, credential-shaped strings are still redacted at rest.
const credentialsOnly = new SecretScrubber();

/**
 * Asks the tool's `recover` what became of an in-doubt execution and settles the key:
 * `executed` → stored as completed (validated and sanitised like a fresh result) and returned;
 * `not_executed` → released, `'retry'` (the caller reserves again and executes); `unknown`
 * or a failing `recover` → a failure, the key stays in doubt. `'retry'` also when another
 * process settled the key first.
 */
async function recoverInDoubt(
  tool: AnyGovernedTool,
  input: unknown,
  idempotencyKey: string,
  context: ToolCallContext,
  run: {
    store: IdempotencyStore;
    report: ToolRunReport;
    options: ExecuteToolOptions;
    scrubber: SecretScrubber | undefined;
  },
): Promise<ToolRunResult | 'retry'> {
  const { store, report } = run;
  let recovery: Awaited<ReturnType<NonNullable<AnyGovernedTool['recover']>>>;
  try {
    recovery = await tool.recover!({ input, idempotencyKey, context });
  } catch (error) {
    if (isGraphBubbleUp(error) || VeridexError.is(error, 'db_unavailable')) throw error;
    const reason = error instanceof Error ? error.message : String(error);
    return report.fail(inDoubtError(tool, idempotencyKey, `recovery failed: ${reason}`));
  }
  if (recovery.status === 'unknown') {
    return report.fail(recovery.error ?? inDoubtError(tool, idempotencyKey));
  }
  try {
    if (recovery.status === 'not_executed') {
      await store.resolve(idempotencyKey, { state: 'released' });
      return 'retry';
    }
    const produced = await storedOutput(tool, recovery.output, run.options, run.scrubber);
    if (!produced.ok) return report.fail(produced.error);
    await store.resolve(idempotencyKey, { state: 'completed', result: produced.stored });
    report.replayed = true;
    return report.succeed(produced.stored);
  } catch (error) {
    if (VeridexError.is(error, 'idempotency_conflict')) return 'retry';
    throw error;
  }
}

/**
 * The key of a call that already ran (or is running) as something else — other arguments, input
 * schema or tool under the same thread and tool call id — is a conflict, never a second run.
 */
function checkFingerprint<Outcome extends { record: { fingerprint?: string; key: string } }>(
  outcome: Outcome,
  fingerprint: string,
  tool: AnyGovernedTool,
): Outcome {
  const stored = outcome.record.fingerprint;
  if (stored === undefined || stored === fingerprint) return outcome;
  throw new VeridexError(
    'idempotency_conflict',
    `This call of tool "${tool.name}" already ran under idempotency key ${outcome.record.key} with other arguments, another input schema or another tool; it is not run again. Propose a new call.`,
    { details: { key: outcome.record.key, tool: tool.name } },
  );
}

function inDoubtError(tool: AnyGovernedTool, key: string, why = ''): VeridexError {
  return new VeridexError(
    'idempotency_in_doubt',
    `An earlier execution of tool "${tool.name}" for this call may or may not have happened (it was interrupted while executing)${why ? `; ${why}` : ''}. It will not be repeated automatically; an operator must resolve idempotency key ${key}.`,
    { details: { key, tool: tool.name } },
  );
}
