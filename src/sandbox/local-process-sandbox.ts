import { ERROR_CODES, VeridexError, type VeridexErrorCode } from '../errors/index.js';
import { childEntryFor } from './child-entry.js';
import type { ChildError, ChildRequest } from './child-protocol.js';
import { validateHostPattern } from './host-pattern.js';
import { safeResolveSync } from './safe-resolve.js';
import type { Sandbox, SandboxRunRequest } from './sandbox.js';
import { SandboxChild } from './sandbox-child.js';

/** Options for {@link LocalProcessSandbox}. */
export interface LocalProcessSandboxOptions {
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
}

/**
 * Runs each call in a fresh child Node process under Node's permission model
 * (`--experimental-permission`): file reads limited to the jail and the tool's own code, file
 * writes to the jail, no child processes, no worker threads; string code generation (`eval`,
 * `new Function`) disabled; an environment holding only the allowlisted variables (secrets
 * arrive on stdin, never in the environment); `--max-old-space-size`; CPU-time and
 * resident-memory limits (polled from `/proc` on Linux); a wall-clock kill; an output cap.
 *
 * The tool must declare where it lives: `sandbox: { module: import.meta.url }` (and
 * `exportName` if the export is not named after the tool).
 *
 * Limits, honestly: Node 20's permission model does not cover the network — outgoing sockets,
 * UDP and DNS are refused by a guard loaded before the tool, which determined code can get
 * around; a symlink inside the jail that points outside it is followed by raw `node:fs` calls
 * (the injected `fs` refuses it); CPU and memory limits need Linux `/proc`. For hostile code
 * add OS isolation (a container, a network namespace).
 *
 * @example
 * const sandbox = new LocalProcessSandbox({ jailRoot: '/srv/agent-data', cpuMs: 5_000, memoryMb: 256 });
 * await runTool(convertPdf, args, { sandbox });
 */
export class LocalProcessSandbox implements Sandbox {
  readonly kind = 'local_process';
  readonly #options: Required<Omit<LocalProcessSandboxOptions, 'networkAllowlist'>> &
    Pick<LocalProcessSandboxOptions, 'networkAllowlist'>;
  readonly #idle = new Map<string, SandboxChild>();

  /** @throws VeridexError `config_invalid` for a missing jail or malformed allowlist. */
  constructor(options: LocalProcessSandboxOptions) {
    for (const pattern of options.networkAllowlist ?? []) {
      const problem = validateHostPattern(pattern);
      if (problem)
        throw new VeridexError(
          'config_invalid',
          `LocalProcessSandbox networkAllowlist: ${problem}`,
        );
    }
    let jailRoot: string;
    try {
      jailRoot = safeResolveSync(options.jailRoot, '.');
    } catch (error) {
      throw new VeridexError(
        'config_invalid',
        `LocalProcessSandbox jailRoot ${options.jailRoot} must be an existing directory.`,
        { cause: error },
      );
    }
    this.#options = {
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
      ...(options.networkAllowlist ? { networkAllowlist: options.networkAllowlist } : {}),
    };
  }

  async run(request: SandboxRunRequest): Promise<unknown> {
    const { tool } = request;
    const module = tool.sandbox?.module;
    if (!module) {
      throw new VeridexError(
        'config_invalid',
        `Tool "${tool.name}" cannot run in a LocalProcessSandbox: declare sandbox: { module: import.meta.url } in its definition so the child process can import it.`,
        { details: { tool: tool.name } },
      );
    }
    request.signal.throwIfAborted();
    const entry = await childEntryFor(module, this.#v8Flags(), this.#options.startup);
    const childRequest: ChildRequest = {
      ...(entry.module ? { module: entry.module } : {}),
      ...(tool.sandbox?.exportName ? { exportName: tool.sandbox.exportName } : {}),
      toolName: tool.name,
      input: request.input,
      context: request.context,
      idempotencyKey: request.idempotencyKey,
      secrets: Object.fromEntries((tool.secrets ?? []).flatMap((name) => revealed(request, name))),
      declaredSecrets: [...(tool.secrets ?? [])],
      jailRoot: this.#options.jailRoot,
      networkAllowlists: [
        [...(tool.sandbox?.networkAllowlist ?? [])],
        ...(this.#options.networkAllowlist ? [[...this.#options.networkAllowlist]] : []),
      ],
      allowHttp: this.#options.allowHttp,
    };
    const options = this.#options;
    const args = [
      '--experimental-permission',
      ...[options.jailRoot, ...entry.readPaths, ...options.readPaths].map(
        (path) => `--allow-fs-read=${path}`,
      ),
      `--allow-fs-write=${options.jailRoot}`,
      ...this.#v8Flags(),
      '--no-warnings',
      ...entry.args,
    ];
    const env = environment(options.envAllowlist, tool.sandbox?.envAllowlist);
    const key = JSON.stringify([args, env]);
    const child = this.#takeChild(key, args, env);
    let response: Awaited<ReturnType<SandboxChild['drive']>>;
    try {
      response = await child.drive(childRequest, options, request.signal, tool.name);
    } finally {
      // The next call's process starts now, after this one, so the two do not compete for CPU.
      if (options.prewarm && !this.#idle.has(key))
        this.#idle.set(key, SandboxChild.start(args, env, options.jailRoot).park());
    }
    for (const violation of response.violations) request.onViolation(violation);
    if (response.ok) return response.value;
    throw toError(response.error);
  }

  // V8 flags: the same at snapshot build and at run (a snapshot refuses to load otherwise).
  #v8Flags(): string[] {
    return [
      `--max-old-space-size=${this.#options.memoryMb}`,
      '--disallow-code-generation-from-strings',
    ];
  }

  #takeChild(key: string, args: string[], env: Record<string, string>): SandboxChild {
    const idle = this.#idle.get(key);
    this.#idle.delete(key);
    if (idle?.waiting) return idle;
    idle?.kill();
    return SandboxChild.start(args, env, this.#options.jailRoot);
  }

  /** Kills the processes started ahead of time (with `prewarm`). */
  close(): void {
    for (const child of this.#idle.values()) child.kill();
    this.#idle.clear();
  }
}

function revealed(request: SandboxRunRequest, name: string): Array<[string, string]> {
  try {
    return [[name, request.secrets.get(name).reveal()]];
  } catch (error) {
    if (VeridexError.is(error, 'secret_not_found')) return [];
    throw error;
  }
}

function environment(
  operator: readonly string[],
  declared: readonly string[] | undefined,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of operator) {
    const value = process.env[name];
    if (value !== undefined && (declared === undefined || declared.includes(name)))
      env[name] = value;
  }
  return env;
}

function toError(error: ChildError): Error {
  if (error.code && (ERROR_CODES as readonly string[]).includes(error.code)) {
    return new VeridexError(error.code as VeridexErrorCode, error.message, {
      details: error.details ?? {},
    });
  }
  const result = new Error(error.message);
  result.name = error.name;
  if (error.retryable) Object.assign(result, { retryable: true });
  return result;
}
