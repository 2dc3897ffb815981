import {
  childEnvironment,
  childRequestFor,
  settle,
  toolModule,
  WarmChildren,
} from './child-call.js';
import { childEntryFor } from './child-entry.js';
import { FS_CHANNEL_FD } from './fs-channel.js';
import { serveJailedFs } from './fs-server.js';
import {
  childV8Flags,
  type ProcessSandboxOptions,
  type ResolvedProcessOptions,
  resolveProcessOptions,
} from './process-sandbox-options.js';
import type { Sandbox, SandboxRunRequest } from './sandbox.js';
import { type ChildLaunch, SandboxChild } from './sandbox-child.js';

/** Options for {@link LocalProcessSandbox}. */
export interface LocalProcessSandboxOptions extends ProcessSandboxOptions {}

/**
 * Runs each call in a fresh child Node process under Node's permission model
 * (`--experimental-permission`): file reads limited to the jail and the tool's own code, file
 * writes to the jail, no child processes, no worker threads, no native addons; string code
 * generation (`eval`, `new Function`) disabled; an environment holding only the allowlisted
 * variables (secrets arrive on stdin, never in the environment); `--max-old-space-size`;
 * CPU-time and resident-memory limits (polled from `/proc` on Linux); a wall-clock kill; an
 * output cap.
 *
 * The tool must declare where it lives: `sandbox: { module: import.meta.url }` (and
 * `exportName` if the export is not named after the tool).
 *
 * The injected `fs` is served by this process over a private channel (the child's permission
 * model would make it walk paths by name, which a racing symlink swap defeats): see
 * `serveJailedFs`.
 *
 * Limits, honestly: Node 20's permission model does not cover the network or signals —
 * sockets, UDP, DNS and `process.kill` are guarded by code loaded before the tool, which
 * determined code can get around; a symlink inside the jail that points outside it is
 * followed by raw `node:fs` calls (the injected `fs` refuses it); CPU and memory limits need
 * Linux `/proc`. For hostile code use {@link IsolatedProcessSandbox}, which the kernel enforces.
 *
 * @example
 * const sandbox = new LocalProcessSandbox({ jailRoot: '/srv/agent-data', cpuMs: 5_000, memoryMb: 256 });
 * await runTool(convertPdf, args, { sandbox });
 */
export class LocalProcessSandbox implements Sandbox {
  readonly kind = 'local_process';
  readonly #options: ResolvedProcessOptions;
  readonly #warm = new WarmChildren();

  /** @throws VeridexError `config_invalid` for a missing jail or malformed allowlist. */
  constructor(options: LocalProcessSandboxOptions) {
    this.#options = resolveProcessOptions('LocalProcessSandbox', options);
  }

  async run(request: SandboxRunRequest): Promise<unknown> {
    const { tool } = request;
    const module = toolModule(tool, 'LocalProcessSandbox');
    request.signal.throwIfAborted();
    const options = this.#options;
    const v8Flags = childV8Flags(options);
    const entry = await childEntryFor(module, v8Flags, {
      startup: options.startup,
      variant: 'guarded',
      ...(options.cacheDirectory ? { cacheDirectory: options.cacheDirectory } : {}),
    });
    const args = [
      '--experimental-permission',
      ...[options.jailRoot, ...entry.readPaths, ...options.readPaths].map(
        (path) => `--allow-fs-read=${path}`,
      ),
      `--allow-fs-write=${options.jailRoot}`,
      ...v8Flags,
      '--no-warnings',
      ...entry.args,
    ];
    const env = childEnvironment(options.envAllowlist, tool.sandbox?.envAllowlist);
    const launch: ChildLaunch = { args, env, cwd: options.jailRoot, fsChannel: true };
    const key = JSON.stringify([args, env]);
    const child = this.#warm.take(key, () => SandboxChild.start(launch));
    // The injected fs is served from here: the child's permission model would make it walk
    // paths by name, which a directory swapped for a symlink at the right moment defeats.
    const stopServing = serveJailedFs(child.fsChannel!, options.jailRoot, request.onViolation);
    let response: Awaited<ReturnType<SandboxChild['drive']>>;
    try {
      response = await child.drive(
        childRequestFor(request, entry, options, { fsChannel: FS_CHANNEL_FD }),
        options,
        request.signal,
        tool.name,
      );
    } finally {
      stopServing();
      // The next call's process starts now, after this one, so the two do not compete for CPU.
      if (options.prewarm) this.#warm.offer(key, () => SandboxChild.start(launch));
    }
    return settle(response, request);
  }

  /** Kills the processes started ahead of time (with `prewarm`). */
  close(): void {
    this.#warm.close();
  }
}
