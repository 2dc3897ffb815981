import type { WritesPlan } from './writes-plan.js';

interface Waiting {
  plan: WritesPlan;
  resolve: () => void;
  reject: (error: unknown) => void;
}

interface Queue {
  waiting: Waiting[];
  running: boolean;
}

/**
 * Client-side group commit for `putWrites`. LangGraph stores each task's writes as soon as
 * the task finishes, so a superstep (or a burst of fast nodes) sends many small writes for
 * one thread at once, each its own commit. Here a thread's first call goes out at once; calls
 * that arrive while it runs wait and then go out together, in one statement and one commit.
 * Each caller still resolves only after its rows are committed, so nothing is acknowledged
 * before it is durable. No call waits on a timer.
 */
export class WriteBatcher {
  readonly #queues = new Map<string, Queue>();
  readonly #store: (threadId: string, plans: readonly WritesPlan[]) => Promise<void>;

  constructor(store: (threadId: string, plans: readonly WritesPlan[]) => Promise<void>) {
    this.#store = store;
  }

  /** Stores `plan` with whatever else is queued for the thread; resolves once committed. */
  submit(threadId: string, plan: WritesPlan): Promise<void> {
    let queue = this.#queues.get(threadId);
    if (!queue) {
      queue = { waiting: [], running: false };
      this.#queues.set(threadId, queue);
    }
    const entered = queue;
    return new Promise<void>((resolve, reject) => {
      entered.waiting.push({ plan, resolve, reject });
      if (!entered.running) void this.#drain(threadId, entered);
    });
  }

  async #drain(threadId: string, queue: Queue): Promise<void> {
    queue.running = true;
    while (queue.waiting.length > 0) {
      const batch = takeBatch(queue.waiting);
      try {
        await this.#store(
          threadId,
          batch.map((entry) => entry.plan),
        );
        for (const entry of batch) entry.resolve();
      } catch (error) {
        await this.#alone(threadId, batch, error);
      }
    }
    queue.running = false;
    this.#queues.delete(threadId);
  }

  /** After a failed batch, stores each call alone so that only the failing one fails. */
  async #alone(threadId: string, batch: readonly Waiting[], error: unknown): Promise<void> {
    if (batch.length === 1) {
      batch[0]!.reject(error);
      return;
    }
    for (const entry of batch) {
      try {
        await this.#store(threadId, [entry.plan]);
        entry.resolve();
      } catch (single) {
        entry.reject(single);
      }
    }
  }
}

/**
 * The longest run of waiting calls (in arrival order) that touch distinct tasks: two calls
 * for the same task and checkpoint must stay in order, as separate statements.
 */
function takeBatch(waiting: Waiting[]): Waiting[] {
  const tasks = new Set<string>();
  let count = 0;
  for (const entry of waiting) {
    const { checkpointNs, checkpointId, taskId } = entry.plan.input;
    const key = `${checkpointNs}\u0000${checkpointId}\u0000${taskId}`;
    if (tasks.has(key)) break;
    tasks.add(key);
    count++;
  }
  return waiting.splice(0, Math.max(count, 1));
}
