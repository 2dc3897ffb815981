import type { RunnableConfig } from '@langchain/core/runnables';
import { isGraphInterrupt } from '@langchain/langgraph';
import type { ApprovalManager } from '../approvals/index.js';
import { AuditLog, deriveEventId, PostgresAuditStore, verifyChain } from '../audit/index.js';
import type { Database } from '../db/index.js';
import { VeridexError } from '../errors/index.js';
import { approvalInterruptsOf, type ResumableGraph, resumeThread } from './resume-thread.js';
import {
  CLAIM_RESOLUTION,
  MARK_FAILED,
  MARK_RESUMED,
  RELEASE,
  RENEW_LEASE,
} from './resumer-sql.js';

/** Options of {@link startResumer}. */
export interface ResumerOptions<Output> {
  /** The compiled graph whose suspended threads this resumer continues (with its checkpointer). */
  graph: ResumableGraph<Output>;
  /** The database the approvals live in (`migrate()` run): every process deciding shares it. */
  db: Database;
  /**
   * The agent whose requests this resumer continues: its governance's `agentId` (the proposer
   * recorded on each request). Requests another agent raised are never claimed, so another
   * graph sharing the checkpointer or the database — another tenant's agent — is not resumed by
   * this one, nor its requests marked done. Required: a resumer that guessed would continue
   * other graphs' runs.
   */
  agentId: string;
  /** Its manager: each cycle first expires requests whose last tier ran out (`sweep()`). */
  approvals?: ApprovalManager;
  /** Where `run_resumed` is recorded, on the resumed thread. */
  audit?: AuditLog;
  /** Passed to every resume (e.g. `{ durability: 'sync' }` for graphs whose tools act). */
  config?: RunnableConfig & { durability?: 'sync' | 'async' | 'exit' };
  /**
   * How often to look for resolutions (default 1000 ms). Where the database delivers
   * notifications (PostgreSQL over a URL, PGlite in this process) a resolution also wakes the
   * resumer at once; polling stays as the safety net.
   */
  pollMs?: number;
  /** How long one resumer holds a resolution before another may take it over (default 60 s). */
  leaseMs?: number;
  /** Attempts per resolution before it is left for a person (default 5; errors are stored). */
  maxAttempts?: number;
  /**
   * Resolutions resumed side by side (default 4), so one slow run does not hold the others;
   * each holds its lease, renewed while it runs.
   */
  maxConcurrent?: number;
  /** Called after each resolution handled (or failed). */
  onOutcome?: (outcome: ResumeOutcome) => void;
}

/** What the resumer did with one resolved approval. */
export interface ResumeOutcome {
  approvalId: string;
  threadId: string;
  /** The request's status when it was claimed (`approved`, `rejected`, `edited`, `expired`). */
  status: string;
  /**
   * `resumed`: the thread was suspended on it and ran on; `not_waiting`: it no longer waits on
   * it (resumed by someone else, or finished); `not_ours`: the graph has no such thread (it is
   * another graph's: left for that graph's resumer); `failed`: the resume threw (retried later).
   */
  outcome: 'resumed' | 'not_waiting' | 'not_ours' | 'failed';
  error?: string;
}

/** A running resumer. */
export interface Resumer {
  /** Handles every resolution due now, one after another; resolves with what it did. */
  runOnce(): Promise<ResumeOutcome[]>;
  /** Stops polling and waits for the resolution in hand. */
  stop(): Promise<void>;
  /**
   * Resolves `true` once resolutions wake this resumer through database notifications, or
   * `false` where it only polls (a pool you provided, PGlite through another process's socket).
   */
  readonly listening: Promise<boolean>;
}

/**
 * Continues runs when their approvals resolve (README "Resuming runs when approvals resolve"):
 * a decision made in the inbox, the CLI or another process resumes the suspended thread with no
 * client action. Each resolved request is claimed under a row lock with a lease (several
 * resumers, in several processes, never take the same one at once), the thread is resumed with
 * `resumeThread`, and the request is marked resumed and recorded as `run_resumed` in the audit
 * log. A crash mid-resume leaves the lease to run out and another attempt to follow; the tool
 * itself still runs at most once (the idempotency ledger), and only after its approval is
 * proven again. Failures are retried with backoff up to `maxAttempts`.
 *
 * @throws VeridexError `config_invalid` for a non-positive `pollMs`, `leaseMs` or `maxAttempts`.
 * @example
 * const resumer = startResumer({ graph, db, agentId: 'payout-bot', approvals, audit, config: { durability: 'sync' } });
 * // … later
 * await resumer.stop();
 */
export function startResumer<Output>(options: ResumerOptions<Output>): Resumer {
  if (typeof options.agentId !== 'string' || options.agentId === '') {
    throw new VeridexError(
      'config_invalid',
      "startResumer needs agentId: the agentId your graph's governance proposes as (default 'agent'), so that it never continues another agent's runs.",
    );
  }
  const pollMs = positive(options.pollMs ?? 1000, 'pollMs');
  const leaseMs = positive(options.leaseMs ?? 60_000, 'leaseMs');
  const maxAttempts = positive(options.maxAttempts ?? 5, 'maxAttempts');
  const maxConcurrent = positive(options.maxConcurrent ?? 4, 'maxConcurrent');
  // Requests of threads this graph does not hold: never claimed again by this resumer.
  const notOurs = new Set<string>();
  let stopped = false;
  let cycle: Promise<ResumeOutcome[]> | undefined;
  let timer: NodeJS.Timeout | undefined;

  // The row's thread and proposer are claims an insider can rewrite: the thread's hash-chained
  // log says which agent opened the request there (read from the database's audit log when no
  // `audit` is given: the approvals' own).
  const log = options.audit ?? new AuditLog({ store: new PostgresAuditStore(options.db) });

  const handle = async (claimed: Claimed): Promise<ResumeOutcome> => {
    const base = { approvalId: claimed.id, threadId: claimed.thread_id, status: claimed.status };
    const leave = async (): Promise<ResumeOutcome> => {
      notOurs.add(claimed.id);
      await options.db.query(RELEASE, [claimed.id]);
      return { ...base, outcome: 'not_ours' };
    };
    try {
      if (!(await openedHereBy(log, claimed, options.agentId))) return await leave();
      const state = await options.graph.getState({
        configurable: { thread_id: claimed.thread_id },
      });
      if (state.createdAt === undefined && state.tasks.length === 0) return await leave();
      if (!isThisGraphsThread(options.graph, state)) return await leave();
      const onIt = approvalInterruptsOf(state).some((pending) =>
        pending.value.approvals.some((approval) => approval.approvalId === claimed.id),
      );
      // On it, or due to run without being suspended on any approval (an earlier resume that
      // failed after the call's step): continue. Suspended on other approvals, or finished: done.
      // A thread waiting on any other interrupt (another graph's gate) is not due to run.
      const dueToRun =
        !onIt &&
        !state.tasks.some((task) => (task.interrupts ?? []).length > 0) &&
        (state.next?.length ?? 0) > 0;
      let outcome: ResumeOutcome['outcome'] = 'not_waiting';
      if (onIt || dueToRun) {
        try {
          await resumeThread(options.graph, claimed.thread_id, undefined, options.config);
          outcome = 'resumed';
        } catch (error) {
          // A graph on an Agent Server (`RemoteGraph`) throws the interrupt a resumed run ended
          // in, where a local graph returns it: resumed, and suspended again.
          if (isGraphInterrupt(error)) outcome = 'resumed';
          else if (!VeridexError.is(error, 'thread_not_suspended')) throw error;
        }
      }
      await options.db.query(MARK_RESUMED, [claimed.id, outcome]);
      await options.audit?.append({
        threadId: claimed.thread_id,
        eventId: deriveEventId(claimed.thread_id, 'run_resumed', claimed.id),
        type: 'run_resumed',
        payload: { approvalId: claimed.id, status: claimed.status, outcome },
      });
      return { ...base, outcome };
    } catch (error) {
      const message = (error as Error).message?.slice(0, 500) ?? String(error);
      // 1 s, 2 s, 4 s … capped at 5 minutes between attempts.
      const backoff = Math.min(300_000, 1000 * 2 ** Math.max(0, claimed.resume_attempts - 1));
      await options.db.query(MARK_FAILED, [claimed.id, message, backoff]).catch(() => undefined);
      return { ...base, outcome: 'failed', error: message };
    }
  };

  const claim = async (): Promise<Claimed | undefined> => {
    const { rows } = await options.db.query<Claimed>(CLAIM_RESOLUTION, [
      leaseMs,
      maxAttempts,
      [...notOurs],
      options.agentId,
    ]);
    return rows[0];
  };

  // Resolutions run side by side, up to `maxConcurrent`: one slow or hung run (a model that
  // does not answer, a long loop after the call) holds one slot, not every other resumption.
  // While runs are in hand the cycle keeps looking for new resolutions every `pollMs`.
  const drain = async (): Promise<ResumeOutcome[]> => {
    await options.approvals?.sweep();
    const outcomes: ResumeOutcome[] = [];
    const inFlight = new Set<Promise<void>>();
    // One run per thread at a time: a second resolution of a thread in hand waits for it.
    const tails = new Map<string, Promise<void>>();
    while (!stopped) {
      while (inFlight.size < maxConcurrent && !stopped) {
        const claimed = await claim();
        if (!claimed) break;
        const before = tails.get(claimed.thread_id) ?? Promise.resolve();
        const task: Promise<void> = withLease(claimed, async () => {
          await before.catch(() => undefined);
          return handle(claimed);
        })
          .then((outcome) => {
            outcomes.push(outcome);
            options.onOutcome?.(outcome);
          })
          .finally(() => {
            inFlight.delete(task);
            if (tails.get(claimed.thread_id) === task) tails.delete(claimed.thread_id);
          });
        tails.set(claimed.thread_id, task);
        inFlight.add(task);
      }
      if (inFlight.size === 0) break;
      await Promise.race([...inFlight, delay(pollMs)]);
    }
    await Promise.all(inFlight);
    return outcomes;
  };

  /** Runs `work` on a claimed resolution, renewing its lease while it lasts. */
  const withLease = async <T>(claimed: Claimed, work: () => Promise<T>): Promise<T> => {
    const renew = setInterval(
      () => void options.db.query(RENEW_LEASE, [claimed.id, leaseMs]).catch(() => undefined),
      Math.max(1, Math.floor(leaseMs / 2)),
    );
    renew.unref();
    try {
      return await work();
    } finally {
      clearInterval(renew);
    }
  };

  const runOnce = (): Promise<ResumeOutcome[]> => {
    // One cycle at a time per resumer: a caller's runOnce joins the one under way.
    cycle ??= drain().finally(() => {
      cycle = undefined;
    });
    return cycle;
  };

  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      runOnce()
        .catch(() => undefined) // a database outage: the next cycle tries again
        .finally(schedule);
    }, pollMs);
    timer.unref();
  };
  schedule();

  // A notification wakes a cycle now; one arriving during a cycle runs another after it, so a
  // resolution committed after the cycle's last claim is not left for the next poll.
  let woken = false;
  const wake = () => {
    if (stopped) return;
    if (cycle) {
      woken = true;
      return;
    }
    runOnce()
      .catch(() => undefined)
      .finally(() => {
        if (!woken) return;
        woken = false;
        wake();
      });
  };
  const listening = options.db.listen
    ?.call(options.db, RESOLVED_CHANNEL, (payload) => {
      // The payload names the schema the request resolved in; other schemas' are not ours.
      if (payload === options.db.schema) wake();
    })
    .catch(() => undefined); // no notifications: polling alone
  // What resolved before the subscription took effect waits for the next poll.
  const subscribed = (listening ?? Promise.resolve(undefined)).then(
    (unsubscribe) => unsubscribe !== undefined,
  );

  return {
    runOnce,
    listening: subscribed,
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      const unsubscribe = await listening;
      await unsubscribe?.().catch(() => undefined);
      await cycle?.catch(() => undefined);
    },
  };
}

/** Where migration 0019 notifies each resolved request (payload: the schema). */
const RESOLVED_CHANNEL = 'veridex_approval_resolved';

interface Claimed {
  id: string;
  thread_id: string;
  status: string;
  resume_attempts: number;
}

function positive(value: number, name: string): number {
  if (!Number.isFinite(value) || value <= 0) {
    throw new VeridexError('config_invalid', `${name} must be a positive number; got ${value}.`);
  }
  return value;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/**
 * Whether the thread's hash-chained log holds the request's FIRST `approval_requested` event,
 * written by `agentId`'s governance: a row moved to another thread, or relabelled with another
 * agent as its proposer, is not this resumer's to continue (an appended second event changes
 * nothing, the first is the opener's).
 */
async function openedHereBy(log: AuditLog, claimed: Claimed, agentId: string): Promise<boolean> {
  const events = await log.events(claimed.thread_id);
  const index = events.findIndex(
    (event) => event.type === 'approval_requested' && event.payload.approvalId === claimed.id,
  );
  if (index < 0 || !verifyChain(events.slice(0, index + 1)).valid) return false;
  // Compared as the claim compares it (`proposer = agentId`).
  return events[index]!.payload.proposer === agentId;
}

/**
 * For a graph on an Agent Server (`RemoteGraph`, which names its `graphId`): whether the thread
 * was run by that graph, as the server's thread metadata says. Local graphs hold only their
 * own threads in their checkpointer.
 */
function isThisGraphsThread(graph: unknown, state: object): boolean {
  const graphId = (graph as { graphId?: unknown }).graphId;
  const ran = (state as { metadata?: { graph_id?: unknown } }).metadata?.graph_id;
  return typeof graphId !== 'string' || ran === undefined || ran === graphId;
}
