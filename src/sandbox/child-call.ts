import { ERROR_CODES, VeridexError, type VeridexErrorCode } from '../errors/index.js';
import type { AnyGovernedTool } from '../tools/types.js';
import type { ChildEntry } from './child-entry.js';
import type { ChildError, ChildRequest, ChildResponse } from './child-protocol.js';
import type { ResolvedProcessOptions } from './process-sandbox-options.js';
import type { SandboxRunRequest, SandboxViolation } from './sandbox.js';
import type { SandboxChild } from './sandbox-child.js';

// The parent side of one call into a child process, shared by the process sandboxes.

/**
 * The module a tool declared for child processes.
 * @throws VeridexError `config_invalid` when the tool declares none.
 */
export function toolModule(tool: AnyGovernedTool, sandboxName: string): string {
  const module = tool.sandbox?.module;
  if (!module) {
    throw new VeridexError(
      'config_invalid',
      `Tool "${tool.name}" cannot run in a ${sandboxName}: declare sandbox: { module: import.meta.url } in its definition so the child process can import it.`,
      { details: { tool: tool.name } },
    );
  }
  return module;
}

/** Every list a host must be on: the tool's declared list, and the operator's if set. */
export function networkAllowlists(
  tool: AnyGovernedTool,
  options: ResolvedProcessOptions,
): string[][] {
  return [
    [...(tool.sandbox?.networkAllowlist ?? [])],
    ...(options.networkAllowlist ? [[...options.networkAllowlist]] : []),
  ];
}

/** The request written to the child's stdin; the declared secrets travel in it, never in the environment. */
export function childRequestFor(
  request: SandboxRunRequest,
  entry: ChildEntry,
  options: ResolvedProcessOptions,
  extra: Pick<ChildRequest, 'egressSocket' | 'envNames' | 'fsChannel'> = {},
): ChildRequest {
  const { tool } = request;
  return {
    ...(entry.module ? { module: entry.module } : {}),
    ...(tool.sandbox?.exportName ? { exportName: tool.sandbox.exportName } : {}),
    toolName: tool.name,
    input: request.input,
    context: request.context,
    idempotencyKey: request.idempotencyKey,
    secrets: Object.fromEntries((tool.secrets ?? []).flatMap((name) => revealed(request, name))),
    declaredSecrets: [...(tool.secrets ?? [])],
    jailRoot: options.jailRoot,
    networkAllowlists: networkAllowlists(tool, options),
    allowHttp: options.allowHttp,
    ...extra,
  };
}

/** The child's whole environment: the operator's allowlist, narrowed by the tool's if it declares one. */
export function childEnvironment(
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

/**
 * Forwards the child's violations, marked as its claims (`reportedBy: 'child'`) and reduced to
 * their three text fields, and returns its value, or throws its error.
 */
export function settle(response: ChildResponse, request: SandboxRunRequest): unknown {
  const claimed: unknown = response.violations;
  for (const violation of Array.isArray(claimed) ? claimed : []) {
    request.onViolation(childClaim(violation));
  }
  if (response.ok) return response.value;
  throw toError(response.error);
}

/**
 * Children started ahead of time (`prewarm`), at most one per launch key. Each is used once.
 */
export class WarmChildren {
  readonly #idle = new Map<string, SandboxChild>();

  /** The waiting child for `key`, or a new one from `start`. */
  take(key: string, start: () => SandboxChild): SandboxChild {
    const idle = this.#idle.get(key);
    this.#idle.delete(key);
    if (idle?.waiting) return idle;
    idle?.kill();
    return start();
  }

  /** Starts the next child for `key` unless one already waits. */
  offer(key: string, start: () => SandboxChild): void {
    if (!this.#idle.has(key)) this.#idle.set(key, start().park());
  }

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

const CAPABILITIES = new Set<string>(['http', 'fs', 'process', 'env', 'eval']);

/** A violation as the child reported it: whatever it sent, three strings and its origin. */
function childClaim(claim: unknown): SandboxViolation {
  const record = (typeof claim === 'object' && claim !== null ? claim : {}) as Record<
    string,
    unknown
  >;
  const capability = String(record.capability);
  return {
    capability: (CAPABILITIES.has(capability)
      ? capability
      : 'process') as SandboxViolation['capability'],
    target: String(record.target ?? ''),
    reason: String(record.reason ?? ''),
    reportedBy: 'child',
  };
}
