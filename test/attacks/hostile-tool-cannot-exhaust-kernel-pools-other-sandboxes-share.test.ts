// Adversary 2 (a hostile tool author) against kernel pools that no cgroup, `maxProcesses` or
// `maxOpenFiles` bounds, and that other sandboxes share:
// - Pseudo-terminals: bubblewrap's `--dev` gives every sandbox a devpts instance with
//   /dev/ptmx (mode 666). Terminals are counted host-wide (`kernel.pty.max`, 4096 by default, of
//   which `kernel.pty.reserve` — 1024 — only the host's own devpts may use): 40 processes × ~120
//   descriptors take all 3,072 that every container and sandbox on the host share, so while the
//   call runs none of them can open a terminal (ENOSPC), a second sandbox included.
// - inotify instances: counted per host user (`fs.inotify.max_user_instances`, 128 by default),
//   and every sandbox of a root agent runs as the same user (65534): one call takes them all and
//   every other sandbox's `inotify_init` (fs.watch) fails with EMFILE while it runs.
// The README says the sandbox user is shared (signals, the egress socket); it does not say that
// one call can starve the others of these.
// Fixed (README "Sandboxes", kernel-pools.ts): each call's bubblewrap starts in a user and mount
// namespace of its own that lowers `user.max_inotify_instances` / `_watches` there (8 / 8192 by
// default) and mounts a devpts with `max=` (16) as the sandbox's /dev/pts. The pools are still
// shared: only each call's share is bounded.
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { afterAll, expect, it } from 'vitest';
import { IsolatedProcessSandbox } from '../../src/sandbox/index.js';
import { attackJail, runHostileTool } from '../support/attack-targets.js';
import { describeIsolated } from '../support/isolation.js';
import { shell } from './fixtures/repass-probe-tools.js';

const { base, jail } = attackJail('veridex-repass-pools-');
afterAll(() => rmSync(base, { recursive: true, force: true }));

const ptysInUse = () => Number(readFileSync('/proc/sys/kernel/pty/nr', 'utf8'));

// 40 processes each open /dev/ptmx until their descriptors run out, then hold them 4 s.
const PTY_HOG = `for i in $(seq 1 40); do bash -c 'for j in $(seq 1 120); do exec {fd}<>/dev/ptmx || break; done; exec sleep 4' 2>/dev/null & done; wait`;
// Two processes take 100 inotify instances each (128 is the per-user default), say so with a
// file in the jail (their working directory), then hold them 8 s.
const INOTIFY = `import ctypes, os, time; libc = ctypes.CDLL(None); held = [libc.inotify_init() for _ in range(100)]; print(sum(1 for fd in held if fd >= 0), flush=True); open("inotify-held-%d" % os.getpid(), "w").close(); time.sleep(8)`;
const INOTIFY_HOG = `python3 -c '${INOTIFY}' & python3 -c '${INOTIFY}' & wait`;
const INOTIFY_ONE = `python3 -c 'import ctypes, os; libc = ctypes.CDLL(None, use_errno=True); fd = libc.inotify_init(); print("opened" if fd >= 0 else os.strerror(ctypes.get_errno()))'`;

async function sleep(ms: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms));
}

describeIsolated('a hostile tool against kernel pools other sandboxes share', () => {
  it.skipIf(!existsSync('/usr/bin/bash') || !existsSync('/proc/sys/kernel/pty/nr'))(
    'cannot take the pseudo-terminals every other sandbox and container on the host share',
    async () => {
      const hog = new IsolatedProcessSandbox({ jailRoot: jail, timeoutMs: 60_000 });
      const other = new IsolatedProcessSandbox({ jailRoot: jail, timeoutMs: 60_000 });
      const before = ptysInUse();
      let peak = before;
      const poll = setInterval(() => {
        peak = Math.max(peak, ptysInUse());
      }, 20);
      try {
        const held = runHostileTool(hog, shell, PTY_HOG);
        // While the hog holds them (4 s), another sandbox asks for one terminal.
        for (let waited = 0; peak - before < 1_000 && waited < 20_000; waited += 50)
          await sleep(50);
        const { result } = await runHostileTool(
          other,
          shell,
          `bash -c 'exec {fd}<>/dev/ptmx && echo opened'`,
        );
        await held;
        // Secure: one call takes a bounded share (or none: no devpts in the sandbox), and
        // another sandbox is never refused for want of one. Today: ~3,000 taken, ENOSPC.
        expect(peak - before, 'pseudo-terminals one call held at once').toBeLessThan(512);
        expect(JSON.stringify(result)).not.toMatch(/No space left on device/);
      } finally {
        clearInterval(poll);
        hog.close();
        other.close();
      }
    },
    120_000,
  );

  it.skipIf(!existsSync('/usr/bin/python3'))(
    'cannot take every inotify instance of the sandbox user from the other sandboxes',
    async () => {
      const hog = new IsolatedProcessSandbox({ jailRoot: jail, timeoutMs: 60_000 });
      const other = new IsolatedProcessSandbox({ jailRoot: jail, timeoutMs: 60_000 });
      try {
        const held = runHostileTool(hog, shell, INOTIFY_HOG);
        const ready = () => readdirSync(jail).filter((name) => name.startsWith('inotify-held-'));
        for (let waited = 0; ready().length < 2 && waited < 30_000; waited += 50) await sleep(50);
        expect(ready().length, 'the hog holds its instances').toBe(2);
        const { result } = await runHostileTool(other, shell, INOTIFY_ONE);
        const hogged = await held;
        expect(hogged.result).toMatchObject({ status: 'success' });
        // Secure: the other sandbox still gets one (limits per sandbox, or a user per
        // sandbox). Today: "Too many open files".
        expect(JSON.stringify(result)).toContain('opened');
      } finally {
        hog.close();
        other.close();
        for (const name of readdirSync(jail)) {
          if (name.startsWith('inotify-held-')) rmSync(`${jail}/${name}`, { force: true });
        }
      }
    },
    120_000,
  );
});
