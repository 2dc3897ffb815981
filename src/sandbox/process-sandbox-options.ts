import { VeridexError } from '../errors/index.js';
import { validateHostPattern } from './host-pattern.js';
import { safeResolveSync } from './safe-resolve.js';

/** Options every process sandbox (`LocalProcessSandbox`, `IsolatedProcessSandbox`) takes. */
export interface ProcessSandboxOptions {
  /** The only directory the tool may write, and its working directory (must exist). */
  jailRoot: string;
  /** Environment variables passed to the child (if the tool declares `sandbox.envAllowlist`, also on that). Default none. */
  envAllowlist?: readonly string[];
  /** CPU time limit of the child in ms (Linux; default 10 000). */
  cpuMs?: number;
  /** V8 heap limit (`--max-old-space-size`) in MB; the resident set may exceed it by 128 MB (Linux). Default 256. */
  memoryMb?: number;
  /** Wall-clock limit in ms (default 30 000). */
  timeoutMs?: number;
  /** Largest result the child may return, in bytes (default 1 MiB). */
  maxOutputBytes?: number;
  /** Operator allowlist, intersected with the tool's declared `sandbox.networkAllowlist`. */
  networkAllowlist?: readonly string[];
  /** Allow plain `http:` for the injected client (default false). */
  allowHttp?: boolean;
  /** Extra read-only paths (data the tool needs besides the jail). */
  readPaths?: readonly string[];
  /**
   * `snapshot` (default): children start from a V8 snapshot with the tool module loaded (its
   * top-level code ran once, when the snapshot was built). `bundle`: every child loads the
   * bundled module afresh — for modules whose top-level state must differ per call. Both need
   * esbuild; without it, or with `module`, a JavaScript module is imported by URL (slowest).
   */
  startup?: 'snapshot' | 'bundle' | 'module';
  /**
   * Start each call's process ahead of time, right after the previous call ended (default
   * false). Every call still runs in a fresh process that no other call touched; a call then
   * costs a few milliseconds instead of a process start. Idle processes do not keep the
   * parent alive; `close()` kills them.
   */
  prewarm?: boolean;
  /**
   * Where bundles and startup snapshots are cached (default `<os.tmpdir()>/veridex-sandbox-<uid>`).
   * It must be a directory this user owns with mode 0700; anything else (another owner, group
   * or world access, a symlink) is not used: a fresh private directory replaces it for this
   * process, with a warning.
   */
  cacheDirectory?: string;
  /**
   * Weaker modes accepted by name where the strong one cannot run here (default none: the
   * sandbox refuses to start). `IsolatedProcessSandbox` knows `memory_cgroup`: without a
   * writable cgroup, run with per-process descriptor caps instead of a cgroup that counts
   * kernel memory and tasks (README, "Sandboxes"). A weaker mode in effect is recorded in the
   * audit log with every call.
   */
  allowWeaker?: readonly string[];
}

/** {@link ProcessSandboxOptions} with defaults applied and the jail resolved. */
export type ResolvedProcessOptions = Required<
  Omit<ProcessSandboxOptions, 'networkAllowlist' | 'cacheDirectory'>
> &
  Pick<ProcessSandboxOptions, 'networkAllowlist' | 'cacheDirectory'>;

/**
 * Validates and completes the options of the sandbox called `name`.
 * @throws VeridexError `config_invalid` for a missing jail or malformed allowlist.
 */
export function resolveProcessOptions(
  name: string,
  options: ProcessSandboxOptions,
): ResolvedProcessOptions {
  for (const pattern of options.networkAllowlist ?? []) {
    const problem = validateHostPattern(pattern);
    if (problem) throw new VeridexError('config_invalid', `${name} networkAllowlist: ${problem}`);
  }
  let jailRoot: string;
  try {
    jailRoot = safeResolveSync(options.jailRoot, '.');
  } catch (error) {
    throw new VeridexError(
      'config_invalid',
      `${name} jailRoot ${options.jailRoot} must be an existing directory.`,
      { cause: error },
    );
  }
  return {
    jailRoot,
    envAllowlist: options.envAllowlist ?? [],
    cpuMs: options.cpuMs ?? 10_000,
    memoryMb: options.memoryMb ?? 256,
    timeoutMs: options.timeoutMs ?? 30_000,
    maxOutputBytes: options.maxOutputBytes ?? 1024 * 1024,
    allowHttp: options.allowHttp ?? false,
    readPaths: options.readPaths ?? [],
    startup: options.startup ?? 'snapshot',
    prewarm: options.prewarm ?? false,
    allowWeaker: options.allowWeaker ?? [],
    ...(options.networkAllowlist ? { networkAllowlist: options.networkAllowlist } : {}),
    ...(options.cacheDirectory ? { cacheDirectory: options.cacheDirectory } : {}),
  };
}

/** V8 flags of a sandbox child: the same at snapshot build and at run (a snapshot refuses to load otherwise). */
export function childV8Flags(options: ResolvedProcessOptions): string[] {
  return [
    `--max-old-space-size=${options.memoryMb}`,
    '--disallow-code-generation-from-strings',
    // V8 compiles a regular expression to machine code from its second run, and a startup
    // snapshot cannot hold that code (the build aborts): a module whose top-level code runs a
    // pattern twice — tool() validating two host names does — could not be snapshotted. Run
    // patterns interpreted for their first thousand matches instead.
    '--regexp-tier-up-ticks=1000',
  ];
}
