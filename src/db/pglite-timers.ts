import type { PGlite } from '@electric-sql/pglite';

/**
 * Keeps an embedded PGlite from holding the process open when it is idle.
 *
 * PostgreSQL keeps an interval timer armed (the 10 s "flush idle statistics" timeout), re-armed
 * from the timer's own handler; in PGlite that is a Node timer, so a script that forgot
 * `close()` stayed alive for minutes after its last query. While a statement runs through
 * the synchronous `execProtocolRawSync`, and while a timer made there fires, `setTimeout` is
 * swapped for one that `unref()`s: PGlite's timers still fire while the process lives, they
 * just never keep it alive. Nothing else runs during those synchronous calls, so no other
 * code's timers are touched. Call before the instance starts (right after `new PGlite`), then
 * {@link rearmPgliteTimers} once it is ready.
 */
export function unrefPgliteTimers(instance: PGlite): void {
  const original = instance.execProtocolRawSync.bind(instance);
  instance.execProtocolRawSync = (message: Uint8Array): Uint8Array =>
    withUnrefTimers(() => original(message));
}

/**
 * Start-up arms the timer outside `execProtocolRawSync`, with the plain `setTimeout`. A
 * statement under a timeout shorter than that timer makes PostgreSQL set it again — PGlite
 * then replaces the Node timer — this time through the `unref()`ing path. (The timeout cannot
 * cut the statement short: a timer cannot fire while PGlite runs synchronously.)
 */
export async function rearmPgliteTimers(instance: PGlite): Promise<void> {
  await instance.exec("SET statement_timeout = '1s'; SELECT 1; RESET statement_timeout");
}

function withUnrefTimers<T>(fn: () => T): T {
  const setTimeoutBefore = globalThis.setTimeout;
  const unrefTimeout = ((
    callback: (...args: unknown[]) => void,
    ms?: number,
    ...args: unknown[]
  ) => {
    // The handler re-arms the timer from inside the callback: keep that inside the swap too.
    const timer = setTimeoutBefore(() => withUnrefTimers(() => callback(...args)), ms);
    timer.unref?.();
    return timer;
  }) as typeof setTimeout;
  globalThis.setTimeout = unrefTimeout;
  try {
    return fn();
  } finally {
    globalThis.setTimeout = setTimeoutBefore;
  }
}
