import { type ChildProcess, spawn } from 'node:child_process';
import type { Duplex, Readable } from 'node:stream';
import { VeridexError } from '../errors/index.js';
import { decodeStoredJson, encodeStoredJson } from '../tools/stored-json.js';
import { CALL_START } from './call-start.js';
import type { ChildRequest, ChildResponse } from './child-protocol.js';
import { FS_CHANNEL_FD } from './fs-channel.js';
import type { JailDiskWatch } from './jail-disk-budget.js';
import { type ProcessUsage, readProcessUsage } from './process-usage.js';

/** Limits of one child run. */
export interface ChildLimits {
  cpuMs: number;
  memoryMb: number;
  timeoutMs: number;
  maxOutputBytes: number;
  /** Threads the child (tree) may have at once; unlimited when absent. */
  maxProcesses?: number;
  /**
   * What the call may write to its jail (see jail-disk-budget.ts): `begin` is called when the
   * call starts, its check at every poll; unbounded when absent.
   */
  disk?: { begin(): JailDiskWatch; readonly bound: string };
}

/** How to start one sandbox child. */
export interface ChildLaunch {
  /** The program (default: this Node binary). */
  command?: string;
  args: readonly string[];
  /** The child's whole environment. */
  env: Record<string, string>;
  cwd: string;
  /** What the limits measure (default: the child process alone). */
  usage?: (pid: number) => ProcessUsage | undefined;
  /**
   * Runs once when the child has exited (releases what the launch set up for it);
   * {@link SandboxChild.exited} settles only once what it returns has settled.
   */
  onExit?: () => void | Promise<void>;
  /** Give the child a channel to the parent's jailed fs at `FS_CHANNEL_FD` (see {@link SandboxChild.fsChannel}). */
  fsChannel?: boolean;
  /**
   * Bytes the program reads from descriptors after the result channel (4, 5, ...; not with
   * `fsChannel`), each from its own pipe, written and closed at start: bubblewrap's seccomp filter.
   */
  inputs?: readonly Buffer[];
  /** Host identity to run the program as (a root parent only; see sandbox-identity.ts). */
  user?: { uid: number; gid: number };
  /**
   * Called with the pid right after the spawn, before one line (`\n`) is written to the child's
   * stdin: a gate command waiting for that line lets the parent place it (in a cgroup) first.
   */
  admit?: (pid: number) => void;
  /** Whether the kernel killed the child for exceeding its memory (a cgroup's OOM killer). */
  oomKilled?: () => boolean;
  /**
   * The program waits for {@link CALL_START} on stdin before running tool code (an isolated
   * child's bundle or snapshot, see call-start.ts): {@link SandboxChild.drive} writes it first.
   */
  awaitsCallStart?: boolean;
}

type Limit = 'cpu' | 'memory' | 'time' | 'output' | 'processes' | 'disk';
const POLL_MS = 20;
/** Node itself needs ~40–60 MB resident besides the V8 heap that --max-old-space-size caps. */
export const RSS_HEADROOM_MB = 128;

/**
 * One sandbox child process: started (it then waits for its request on stdin), driven once,
 * then gone. Output is collected from the moment it starts; limits apply from the moment it
 * is driven (CPU counted from there), so a child started ahead of time is not charged for
 * its idle wait.
 */
export class SandboxChild {
  readonly #child: ChildProcess;
  readonly #result: Buffer[] = [];
  #resultBytes = 0;
  #stderr = '';
  #closed: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly #released: Promise<void>;
  #resultEnded: Promise<void>;
  #exited = false;
  #onData: (bytes: number) => void = () => undefined;
  readonly #usage: (pid: number) => ProcessUsage | undefined;
  readonly #oomKilled: () => boolean;
  readonly #awaitsCallStart: boolean;

  private constructor(child: ChildProcess, launch: ChildLaunch) {
    this.#child = child;
    this.#usage = launch.usage ?? readProcessUsage;
    this.#oomKilled = launch.oomKilled ?? (() => false);
    this.#awaitsCallStart = launch.awaitsCallStart === true;
    const results = child.stdio[3] as Readable;
    results.on('data', (chunk: Buffer) => {
      this.#resultBytes += chunk.length;
      this.#result.push(chunk);
      this.#onData(this.#resultBytes);
    });
    // The child closes the result channel as soon as it has written: no need to wait for the
    // process to tear down before answering.
    this.#resultEnded = new Promise((resolve) => {
      results.on('end', resolve);
      results.on('error', resolve);
    });
    child.stdout?.resume();
    child.stderr?.on('data', (chunk: Buffer) => {
      if (this.#stderr.length < 16_384) this.#stderr += chunk.toString('utf8');
    });
    this.#closed = new Promise((resolve, reject) => {
      child.on('error', (error) => {
        this.#exited = true;
        reject(
          new VeridexError(
            'sandbox_violation',
            `Could not start the sandbox process: ${error.message}`,
            { cause: error },
          ),
        );
      });
      child.on('close', (code, signal) => {
        this.#exited = true;
        resolve({ code, signal });
      });
    });
    const ended = this.#closed.then(
      () => undefined,
      () => undefined,
    );
    const onExit = launch.onExit;
    this.#released = onExit ? ended.then(onExit).then(ignore, ignore) : ended;
  }

  /** Starts the launch's program (default `node`) with exactly its `env`, in its `cwd`. */
  static start(launch: ChildLaunch): SandboxChild {
    const inputs = launch.inputs ?? [];
    if (launch.fsChannel && inputs.length > 0) throw new Error('inputs and fsChannel share fd 4');
    const child = spawn(launch.command ?? process.execPath, [...launch.args], {
      cwd: launch.cwd,
      env: launch.env,
      stdio: [
        ...['pipe', 'pipe', 'pipe', 'pipe'],
        ...(launch.fsChannel ? ['pipe'] : inputs.map(() => 'pipe')),
      ] as Array<'pipe'>,
      ...(launch.user ? { uid: launch.user.uid, gid: launch.user.gid } : {}),
    });
    inputs.forEach((bytes, index) => {
      const pipe = child.stdio[4 + index] as Duplex | null;
      pipe?.on('error', () => undefined);
      pipe?.end(bytes);
    });
    const started = new SandboxChild(child, launch);
    if (launch.admit && child.pid !== undefined) {
      try {
        launch.admit(child.pid);
      } catch (error) {
        child.kill('SIGKILL');
        throw new VeridexError(
          'sandbox_unavailable',
          `Could not place the sandbox process in its cgroup: ${(error as Error).message}`,
          { cause: error },
        );
      }
      child.stdin?.write('\n');
    }
    return started;
  }

  /**
   * Settles once the process has exited (whether it started or not) and what the launch's
   * `onExit` returned has settled.
   */
  get exited(): Promise<void> {
    return this.#released;
  }

  /** The parent's end of the jailed fs channel, for a child started with `fsChannel`. */
  get fsChannel(): Duplex | undefined {
    return (this.#child.stdio[FS_CHANNEL_FD] as Duplex | null | undefined) ?? undefined;
  }

  /** Still waiting for its request. */
  get waiting(): boolean {
    return !this.#exited && this.#child.exitCode === null && this.#child.stdin?.writable === true;
  }

  /** Lets the parent exit while this child waits (it then sees stdin close and exits too). */
  park(): this {
    this.#child.unref();
    for (const stream of this.#child.stdio) (stream as { unref?: () => void } | null)?.unref?.();
    return this;
  }

  kill(): void {
    this.#child.kill('SIGKILL');
  }

  /**
   * Sends the request and waits for the response under `limits`.
   * @throws the signal's reason on abort; VeridexError `sandbox_limit_exceeded` (details.limit)
   * or `tool_failed` when the child ends without a response.
   */
  async drive(
    request: ChildRequest,
    limits: ChildLimits,
    signal: AbortSignal,
    toolName: string,
  ): Promise<ChildResponse> {
    const child = this.#child;
    child.ref();
    for (const stream of child.stdio) (stream as { ref?: () => void } | null)?.ref?.();
    let limit: Limit | undefined;
    let aborted = false;
    const stop = (reason: Limit | 'abort') => {
      if (reason === 'abort') aborted = true;
      else limit ??= reason;
      child.kill('SIGKILL');
    };
    const measure = () => (child.pid === undefined ? undefined : this.#usage(child.pid));
    const baseline = measure();
    const disk = limits.disk?.begin();
    const wall = setTimeout(() => stop('time'), limits.timeoutMs);
    const monitor = setInterval(() => {
      const usage = measure();
      if (usage === undefined) return;
      if (usage.cpuMs - (baseline?.cpuMs ?? 0) > limits.cpuMs) stop('cpu');
      else if (usage.rssMb > limits.memoryMb + RSS_HEADROOM_MB) stop('memory');
      else if (limits.maxProcesses !== undefined && usage.tasks > limits.maxProcesses)
        stop('processes');
      else if (disk?.exceeded()) stop('disk');
    }, POLL_MS);
    const onAbort = () => stop('abort');
    signal.addEventListener('abort', onAbort, { once: true });
    this.#onData = (bytes) => {
      if (bytes > limits.maxOutputBytes) stop('output');
    };
    this.#onData(this.#resultBytes);
    let response: ChildResponse | undefined;
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    try {
      const encoded = Buffer.from(encodeStoredJson(request), 'utf8');
      child.stdin?.end(this.#awaitsCallStart ? Buffer.concat([CALL_START, encoded]) : encoded);
      await Promise.race([this.#resultEnded, this.#closed]);
      // Writes since the last poll count too: a call that ends over its jail bound reports it.
      if (limit === undefined && !aborted && (await disk?.settle())) stop('disk');
      if (limit === undefined && !aborted && this.#resultBytes > 0) response = this.#decode();
      if (response)
        child.kill('SIGKILL'); // it is exiting anyway; do not wait for teardown
      else exit = await this.#closed;
    } finally {
      clearTimeout(wall);
      clearInterval(monitor);
      signal.removeEventListener('abort', onAbort);
    }
    if (response) return response;
    exit ??= { code: null, signal: null };
    if (aborted) throw signal.reason;
    if (limit === undefined && this.#oomKilled()) limit = 'memory';
    if (limit === undefined && /heap out of memory|Reached heap limit/i.test(this.#stderr))
      limit = 'memory';
    // The kernel's per-file bound (RLIMIT_FSIZE, set with the jail's bound) ended the process:
    // its signal, or bubblewrap's exit status for it (128 + SIGXFSZ).
    if (limit === undefined && limits.disk && (exit.signal === 'SIGXFSZ' || exit.code === 153))
      limit = 'disk';
    if (limit) throw limitError(toolName, limit, limits);
    if (this.#resultBytes === 0) {
      // A clean exit without a result (code 0, or 13 for a pending top-level await): the
      // tool's promise was left pending with nothing scheduled that could settle it.
      const why =
        exit.code === 0 || exit.code === 13
          ? 'its promise never settled'
          : `it exited with ${exit.signal ?? `code ${exit.code}`}`;
      throw new VeridexError(
        'tool_failed',
        `The sandbox process of tool "${toolName}" ended without a result: ${why}.`,
        {
          details: { tool: toolName, exitCode: exit.code, signal: exit.signal },
        },
      );
    }
    return (
      this.#decode() ??
      Promise.reject(
        new VeridexError(
          'tool_failed',
          `The sandbox process of tool "${toolName}" returned an unreadable result.`,
        ),
      )
    );
  }

  #decode(): ChildResponse | undefined {
    try {
      return decodeStoredJson(Buffer.concat(this.#result).toString('utf8')) as ChildResponse;
    } catch {
      return undefined;
    }
  }
}

function ignore(): void {}

function limitError(name: string, limit: Limit, limits: ChildLimits): VeridexError {
  const what = {
    cpu: `used more than ${limits.cpuMs} ms of CPU`,
    memory: `used more than ${limits.memoryMb} MB of memory`,
    time: `ran longer than ${limits.timeoutMs} ms`,
    output: `returned more than ${limits.maxOutputBytes} bytes`,
    processes: `ran more than ${limits.maxProcesses} processes and threads at once`,
    disk: `wrote more than ${limits.disk?.bound} to its jail`,
  }[limit];
  return new VeridexError(
    'sandbox_limit_exceeded',
    `Tool "${name}" ${what} and was stopped by its sandbox.`,
    {
      details: { tool: name, limit },
    },
  );
}
