import { VeridexError } from '../errors/index.js';
import { createAllowlistedHttpClient } from './allowlisted-http-client.js';
import { validateHostPattern } from './host-pattern.js';
import { createJailedFs, deniedFs } from './jailed-fs.js';
import { executeWithCapabilities, type Sandbox, type SandboxRunRequest } from './sandbox.js';

/** Options for {@link InProcessSandbox}. */
export interface InProcessSandboxOptions {
  /**
   * The operator's allowlist. A host must be on it *and* on the tool's declared
   * `sandbox.networkAllowlist`; a tool that declares none gets no network at all.
   * Omitted: the tool's declared list alone decides.
   */
  networkAllowlist?: readonly string[];
  /** Directory the injected `fs` is jailed to (must exist). Omitted: every fs call is refused. */
  jailRoot?: string;
  /** Allow plain `http:` URLs (default false). */
  allowHttp?: boolean;
  /** The fetch behind the allowlist (default `globalThis.fetch`; tests inject a fake). */
  fetch?: typeof fetch;
}

/**
 * Runs `execute` in this process with an allowlisted `http` client (exact hosts or
 * `*.domain`, https by default, redirects re-checked, private addresses only when listed
 * exactly) and an `fs` jailed to `jailRoot` (see `createJailedFs`). Cheap (no process start)
 * but not isolation: it mediates only what the tool does through the injected clients.
 * Use `IsolatedProcessSandbox` for code you do not trust.
 *
 * @example
 * const sandbox = new InProcessSandbox({ networkAllowlist: ['*.example.com'], jailRoot: '/srv/data' });
 * await runTool(fetchPage, { url }, { sandbox });
 */
export class InProcessSandbox implements Sandbox {
  readonly kind = 'in_process';
  readonly #options: InProcessSandboxOptions;

  /** @throws VeridexError `config_invalid` for a malformed allowlist entry. */
  constructor(options: InProcessSandboxOptions = {}) {
    for (const pattern of options.networkAllowlist ?? []) {
      const problem = validateHostPattern(pattern);
      if (problem)
        throw new VeridexError('config_invalid', `InProcessSandbox networkAllowlist: ${problem}`);
    }
    this.#options = { ...options };
  }

  run(request: SandboxRunRequest): Promise<unknown> {
    const { tool, onViolation: report } = request;
    const allowlists = [tool.sandbox?.networkAllowlist ?? []];
    if (this.#options.networkAllowlist) allowlists.push(this.#options.networkAllowlist);
    const http = createAllowlistedHttpClient({
      allowlists,
      report,
      signal: request.signal,
      ...(this.#options.allowHttp ? { allowHttp: true } : {}),
      ...(this.#options.fetch ? { fetch: this.#options.fetch } : {}),
    });
    const fs = this.#options.jailRoot
      ? createJailedFs(this.#options.jailRoot, report)
      : deniedFs(report, 'this sandbox has no jailRoot');
    return executeWithCapabilities(request, { http, fs });
  }
}
