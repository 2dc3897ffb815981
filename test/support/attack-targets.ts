// What a hostile tool aims at, set up for real on this machine: listeners that record whatever
// reaches them (TCP, UDP, a DNS "server"), and a victim process of the same user.
import { type ChildProcess, spawn } from 'node:child_process';
import dgram from 'node:dgram';
import {
  chmodSync,
  closeSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  realpathSync,
  writeFileSync,
} from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AuditLog } from '../../src/audit/index.js';
import type { Sandbox } from '../../src/sandbox/index.js';
import { executeTool } from '../../src/tools/execute-tool.js';
import type { AnyGovernedTool } from '../../src/tools/index.js';

/** A TCP listener that records every connection and the bytes it received. */
export interface TcpTarget {
  port: number;
  host: string;
  connections(): number;
  received(): string;
  close(): Promise<void>;
}

export async function tcpTarget(host = '127.0.0.1'): Promise<TcpTarget> {
  let connections = 0;
  let received = '';
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    connections++;
    sockets.add(socket);
    socket.on('data', (chunk) => (received += chunk.toString('utf8')));
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return {
    port: (server.address() as AddressInfo).port,
    host,
    connections: () => connections,
    received: () => received,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A UDP listener (also a stand-in DNS server: a query arrives as a datagram). */
export interface UdpTarget {
  port: number;
  received(): string;
  close(): Promise<void>;
}

export async function udpTarget(): Promise<UdpTarget> {
  let received = '';
  const socket = dgram.createSocket('udp4');
  socket.on('message', (message) => (received += message.toString('latin1')));
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return {
    port: socket.address().port,
    received: () => received,
    close: () => new Promise((resolve) => socket.close(() => resolve())),
  };
}

/** A process of this user that an attack must not be able to signal. */
export interface Victim {
  pid: number;
  /** Still running: not exited, not a zombie waiting to be reaped. */
  alive(): boolean;
  stop(): void;
}

/** @param env the victim's environment (what /proc/<pid>/environ shows for it). */
export function spawnVictim(env: Record<string, string> = {}): Victim {
  const child: ChildProcess = spawn('sleep', ['600'], {
    stdio: 'ignore',
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
  });
  return {
    pid: child.pid!,
    alive: () => {
      if (child.exitCode !== null || child.signalCode !== null) return false;
      try {
        const stat = readFileSync(`/proc/${child.pid}/stat`, 'utf8');
        return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
      } catch {
        return false;
      }
    },
    stop: () => child.kill('SIGKILL'),
  };
}

/** A secret that only a successful escape could have carried somewhere. */
export function canary(label: string): string {
  return `canary${label}${Math.random().toString(36).slice(2, 10)}`;
}

/**
 * A second process that, as fast as it can, swaps the directory `parent/name` for a symlink to
 * `outside` and back (two renames each way), until stopped. `stop()` restores the directory.
 */
export interface SwapRacer {
  /** Resolves once the racer has swapped at least once (it is really running). */
  started: Promise<void>;
  stop(): Promise<void>;
}

const RACER = `
const { renameSync, symlinkSync, rmSync, lstatSync } = require('node:fs');
const [parent, name, outside] = process.argv.slice(1);
const real = parent + '/' + name, hidden = real + '.real', link = real + '.link';
const exists = (path) => lstatSync(path, { throwIfNoEntry: false }) !== undefined;
// A tool may recreate the directory while it is away (a write creates missing parents): clear
// whatever sits in the way, so the swap goes on.
const move = (from, to) => {
  try { renameSync(from, to); } catch { try { rmSync(to, { recursive: true, force: true }); renameSync(from, to); } catch {} }
};
rmSync(link, { force: true });
symlinkSync(outside, link);
let stopping = false;
process.on('SIGTERM', () => { stopping = true; });
let announced = false;
const step = () => {
  for (let i = 0; i < 200 && !stopping; i++) {
    if (!exists(link)) symlinkSync(outside, link);
    move(real, hidden);
    move(link, real);
    move(real, link);
    move(hidden, real);
  }
  if (!announced) { announced = true; process.stdout.write('swapping\\n'); }
  // A tool's write may have left a directory where the link was: remove either.
  if (stopping) { rmSync(link, { recursive: true, force: true }); process.exit(0); }
  setImmediate(step);
};
step();
`;

export function startSwapRacer(parent: string, name: string, outside: string): SwapRacer {
  const child = spawn(process.execPath, ['-e', RACER, parent, name, outside], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const started = new Promise<void>((resolve, reject) => {
    child.stdout!.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`the racer exited early (${code})`)));
  });
  return {
    started,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** A jail and an "outside" directory beside it, for the path-escape attacks. */
export interface AttackJail {
  /** The directory holding both; remove it when done. */
  base: string;
  jail: string;
  outside: string;
}

/**
 * Lays out what the file-system attacks need: `race/a/b/file.txt` inside the jail (the
 * directory a swap racer turns into a symlink) and its twin outside reading `SECRET`, and a
 * hard link `hard.txt` in the jail to `outside/secret.txt`.
 */
export function attackJail(prefix: string): AttackJail {
  const base = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  // Searchable by others (not listable): a root agent's IsolatedProcessSandbox runs the tool as
  // an unprivileged user, who must reach the jail below it.
  chmodSync(base, 0o711);
  const jail = join(base, 'jail');
  const outside = join(base, 'outside');
  mkdirSync(join(jail, 'race', 'a', 'b'), { recursive: true });
  mkdirSync(join(outside, 'b'), { recursive: true });
  writeFileSync(join(jail, 'race', 'a', 'b', 'file.txt'), 'inside');
  writeFileSync(join(outside, 'b', 'file.txt'), 'SECRET');
  writeFileSync(join(outside, 'secret.txt'), 'SECRET');
  linkSync(join(outside, 'secret.txt'), join(jail, 'hard.txt'));
  return { base, jail, outside };
}

/**
 * Runs a hostile tool in `sandbox` (its one string argument `arg`, JSON-encoded unless a
 * string) and returns the result with the security events the call recorded.
 */
export async function runHostileTool(
  sandbox: Sandbox,
  subject: AnyGovernedTool,
  arg: unknown,
  extra = {},
) {
  const audit = new AuditLog();
  const result = await executeTool(
    subject,
    { arg: typeof arg === 'string' ? arg : JSON.stringify(arg) },
    { sandbox, audit, threadId: 't', toolCallId: 'c', ...extra },
  );
  const events = await audit.events('t');
  return { result, securityEvents: events.filter((event) => event.type === 'security_event') };
}

/**
 * Runs the agent script `agentFile` (`node --import tsx agentFile jail secret`) holding a file
 * with `secret` open at descriptor 40, descriptors 3..39 closed — what `node agent 40<secret`
 * gives an agent — and returns its exit code, stderr, and the JSON it printed.
 */
export async function runAgentHoldingFd40(
  agentFile: string,
  jail: string,
  scratch: string,
  secret: string,
): Promise<{ code: unknown; errors: string; printed: Record<string, unknown> | undefined }> {
  const secretFile = join(scratch, 'held-open.txt');
  writeFileSync(secretFile, secret, { mode: 0o600 });
  const held = openSync(secretFile, 'r');
  const stdio: Array<'pipe' | 'ignore' | number> = ['ignore', 'pipe', 'pipe'];
  for (let fd = 3; fd < 40; fd++) stdio.push('ignore');
  stdio.push(held);
  const child = spawn(process.execPath, ['--import', 'tsx', agentFile, jail, secret], { stdio });
  closeSync(held);
  let output = '';
  let errors = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (errors += chunk));
  const code = await new Promise((resolve) => child.on('close', resolve));
  let printed: Record<string, unknown> | undefined;
  try {
    printed = JSON.parse(output);
  } catch {
    printed = undefined;
  }
  return { code, errors, printed };
}
