// Adversary 6 (a crash at the worst moment) and 2 (a hostile tool that daemonises) against
// IsolatedProcessSandbox. README "Sandboxes": every call runs in a cgroup of its own, "the
// cgroup is removed when the call ends".
// - Processes: an agent SIGKILLed while its call runs takes the whole sandbox with it, a
//   daemonised grandchild in a new session included (bubblewrap's --die-with-parent, then the
//   end of the PID namespace). Defended: the first test passes.
// - Cgroups (found open by the re-pass): only the agent removed a call's cgroup, on a retry timer
//   that was unref'd. An agent that was killed, or that simply exited right after a call (a CLI,
//   a job), left the call's cgroup — in the memory and the pids hierarchies — and, with
//   `prewarm`, that of the sandbox waiting for the next call; nothing removed them later. Each
//   leaked memory cgroup holds one of the host's 65,535 memory cgroup ids: enough crashes or
//   short-lived agents and no one on the host can create a memory cgroup (containers included).
//   Now a call settles only once its cgroups are gone (the retries keep the agent alive), and
//   every new IsolatedProcessSandbox removes the empty `veridex-<pid>-…` cgroups of agents that
//   no longer run (src/sandbox/stale-cgroups.ts).
import { execFileSync, spawn } from 'node:child_process';
import { readdirSync, rmdirSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';
import { findCgroupHost } from '../../src/sandbox/cgroup-limits.js';
import { IsolatedProcessSandbox } from '../../src/sandbox/index.js';
import { attackJail, runHostileTool } from '../support/attack-targets.js';
import { describeIsolated } from '../support/isolation.js';
import { shell } from './fixtures/repass-probe-tools.js';

const { base, jail } = attackJail('veridex-repass-crash-');
afterAll(() => rmSync(base, { recursive: true, force: true }));
const agentFile = fileURLToPath(new URL('./fixtures/repass-killed-agent.ts', import.meta.url));

function running(pattern: string): string {
  try {
    return execFileSync('pgrep', ['-f', pattern], { encoding: 'utf8' }).trim();
  } catch {
    return ''; // pgrep exits 1 when nothing matches
  }
}

async function waitFor(condition: () => boolean, ms: number): Promise<void> {
  for (let waited = 0; !condition() && waited < ms; waited += 100) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The per-call cgroups agent `pid` created (its cgroups are named `veridex-<pid>-…`). */
function cgroupsOf(pid: number): string[] {
  const host = findCgroupHost();
  if (!('version' in host)) return [];
  const parents = [host.memoryParent, ...(host.pidsParent ? [host.pidsParent] : [])];
  return parents.flatMap((parent) =>
    readdirSync(parent)
      .filter((name) => name.startsWith(`veridex-${pid}-`))
      .map((name) => `${parent}/${name}`),
  );
}

/** Removes leaked (empty) cgroups, so that a failing run leaves nothing on the host. */
function removeEmpty(directories: readonly string[]): void {
  for (const directory of directories) {
    try {
      rmdirSync(directory);
    } catch {
      // still busy, or gone
    }
  }
}

/** Starts the agent fixture; resolves with it and its pid once it has printed it. */
async function startAgent(mode: 'hang' | 'exit', marker: string) {
  const agent = spawn(process.execPath, ['--import', 'tsx', agentFile, jail, mode, marker], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let errors = '';
  agent.stdout!.on('data', (chunk) => (output += chunk));
  agent.stderr!.on('data', (chunk) => (errors += chunk));
  const closed = new Promise<unknown>((resolve) => agent.on('close', resolve));
  await waitFor(() => output.includes('\n'), 60_000);
  return {
    agent,
    pid: Number(output.split('\n')[0]),
    closed,
    output: () => output,
    errors: () => errors,
  };
}

/** Runs one call in this process, so that any stale-cgroup clean-up a fix adds has run. */
async function runACall(): Promise<void> {
  const box = new IsolatedProcessSandbox({ jailRoot: jail });
  try {
    await runHostileTool(box, shell, 'true');
  } finally {
    box.close();
  }
}

describeIsolated('an agent that dies or exits while its sandbox holds a call', () => {
  const cgroups = 'version' in findCgroupHost();

  it('SIGKILLed mid-call: leaves no process of the sandbox running, a daemonised one included', async () => {
    const marker = `67.${Math.floor(Math.random() * 1e6)}`;
    const { agent, closed } = await startAgent('hang', marker);
    try {
      // The tool has daemonised `sleep <marker>` in a new session: the call is running.
      await waitFor(() => running(`^sleep ${marker}`) !== '', 60_000);
      expect(running(`^sleep ${marker}`), 'the daemon started').not.toBe('');
    } finally {
      agent.kill('SIGKILL');
      await closed;
    }
    await waitFor(
      () => running(`^sleep ${marker}`) === '' && running(`bwrap.*${jail}`) === '',
      10_000,
    );
    expect(running(`^sleep ${marker}`)).toBe('');
    expect(running(`bwrap.*${jail}`)).toBe('');
  }, 120_000);

  it.skipIf(!cgroups)(
    'has removed each call’s cgroups by the time the call settles',
    async () => {
      const box = new IsolatedProcessSandbox({ jailRoot: jail });
      try {
        for (let call = 0; call < 5; call++) {
          // A process tree to reap when the call ends: the shell and its children.
          const { result } = await runHostileTool(box, shell, 'sleep 0.2 & sleep 0.1; true');
          expect(result).toMatchObject({ status: 'success' });
          expect(cgroupsOf(process.pid), `after call ${call + 1}`).toEqual([]);
        }
      } finally {
        box.close();
      }
    },
    120_000,
  );

  it.skipIf(!cgroups)(
    'SIGKILLed mid-call: leaves no cgroup of the call behind',
    async () => {
      const marker = `68.${Math.floor(Math.random() * 1e6)}`;
      const { agent, pid, closed } = await startAgent('hang', marker);
      try {
        await waitFor(() => running(`^sleep ${marker}`) !== '', 60_000);
        expect(cgroupsOf(pid).length, 'the call runs in its cgroups').toBeGreaterThan(0);
      } finally {
        agent.kill('SIGKILL');
        await closed;
      }
      await waitFor(() => running(`^sleep ${marker}`) === '', 10_000);
      await runACall();
      await waitFor(() => cgroupsOf(pid).length === 0, 10_000);
      // Before the fix: its memory and pids cgroups stayed, empty, for good.
      const left = cgroupsOf(pid);
      removeEmpty(left);
      expect(left).toEqual([]);
    },
    120_000,
  );

  it.skipIf(!cgroups)(
    'exiting right after a call (prewarm on): leaves no cgroup behind',
    async () => {
      const { pid, closed, output, errors } = await startAgent('exit', '0');
      expect(await closed, errors()).toBe(0);
      expect(output()).toMatch(/"status":"success"/);
      // The waiting sandbox sees its stdin close and exits; give its cgroup time to empty.
      await waitFor(() => running(`bwrap.*${jail}`) === '', 10_000);
      await runACall();
      await waitFor(() => cgroupsOf(pid).length === 0, 10_000);
      // Before the fix: the waiting sandbox's cgroups stayed — and the call's too when the agent
      // exited while their removal was still being retried (on an unref'd timer).
      const left = cgroupsOf(pid);
      removeEmpty(left);
      expect(left).toEqual([]);
    },
    120_000,
  );
});
