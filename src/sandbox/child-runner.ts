import { closeSync, readSync, writeSync } from 'node:fs';
import { VeridexError } from '../errors/index.js';
import { ExecutionScope, runInScope, ScopedSecretRef } from '../tools/secret-ref.js';
import { decodeStoredJson, encodeStoredJson } from '../tools/stored-json.js';
import type { AnyGovernedTool, ToolSecrets } from '../tools/types.js';
import { createAllowlistedHttpClient } from './allowlisted-http-client.js';
import {
  type ChildError,
  type ChildRequest,
  type ChildResponse,
  RESULT_FD,
} from './child-protocol.js';
import { createEgressFetch } from './egress-fetch.js';
import { hostMatches } from './host-pattern.js';
import { createJailedFs } from './jailed-fs.js';
import type { configureNetworkGuard } from './network-guard.js';
import { remoteJailedFs } from './remote-jailed-fs.js';
import type { SandboxViolation } from './sandbox.js';

// Node's permission model names what it refused in `error.permission`.
const PERMISSION_CAPABILITY: Record<string, SandboxViolation['capability']> = {
  FileSystemRead: 'fs',
  FileSystemWrite: 'fs',
  ChildProcess: 'process',
  WorkerThreads: 'process',
};

/**
 * The body of a process sandbox child: reads one request from stdin, imports the tool, runs
 * its `execute` with jailed `fs`, allowlisted `http` and scoped secrets, writes one response to
 * fd 3 and exits. `load` imports the tool module (bundled or by URL); `networkGuard` is the
 * in-process guard's configuration (LocalProcessSandbox children only), set before the tool runs.
 */
export async function runChild(
  load: (request: ChildRequest) => Promise<Record<string, unknown>>,
  networkGuard?: typeof configureNetworkGuard,
): Promise<void> {
  const violations: SandboxViolation[] = [];
  const onViolation = (violation: SandboxViolation) => violations.push(violation);
  let response: ChildResponse;
  try {
    const request = decodeStoredJson(readStdin()) as ChildRequest;
    if (request.envNames) {
      for (const name of Object.keys(process.env)) {
        if (!request.envNames.includes(name)) delete process.env[name];
      }
    }
    networkGuard?.(
      (host) => request.networkAllowlists.every((list) => hostMatches(host, list)),
      onViolation,
    );
    const tool = findTool(await load(request), request);
    const scope = new ExecutionScope(tool.name);
    const secrets: ToolSecrets = {
      get(name: string) {
        const value = request.secrets[name];
        if (!request.declaredSecrets.includes(name) || value === undefined) {
          throw new VeridexError(
            'secret_not_found',
            `Tool "${tool.name}" has no secret ${name} (declared: ${request.declaredSecrets.join(', ') || 'none'}).`,
            {
              details: { tool: tool.name, secret: name },
            },
          );
        }
        return new ScopedSecretRef(name, value, scope);
      },
    };
    const value = await runInScope(scope, () =>
      tool.execute({
        input: request.input,
        secrets,
        idempotencyKey: request.idempotencyKey,
        signal: new AbortController().signal,
        context: request.context,
        http: createAllowlistedHttpClient({
          allowlists: request.networkAllowlists,
          allowHttp: request.allowHttp,
          report: onViolation,
          ...(request.egressSocket ? { fetch: createEgressFetch(request.egressSocket) } : {}),
        }),
        fs:
          request.fsChannel === undefined
            ? createJailedFs(request.jailRoot, onViolation)
            : remoteJailedFs(request.jailRoot, request.fsChannel, onViolation),
      }),
    );
    scope.close();
    response = { ok: true, value, violations };
  } catch (error) {
    response = { ok: false, error: toChildError(error, onViolation), violations };
  }
  writeAll(encodeStoredJson(response));
  closeSync(RESULT_FD);
  process.exit(0);
}

function findTool(module: Record<string, unknown>, request: ChildRequest): AnyGovernedTool {
  const candidates =
    request.exportName === undefined ? Object.values(module) : [module[request.exportName]];
  const found = candidates.find(
    (value) =>
      (value as AnyGovernedTool | undefined)?.kind === 'veridex.tool' &&
      (value as AnyGovernedTool).name === request.toolName,
  );
  if (found === undefined) {
    const where =
      request.exportName === undefined ? 'any export' : `export "${request.exportName}"`;
    throw new VeridexError(
      'config_invalid',
      `The tool module has no tool "${request.toolName}" in ${where}.`,
    );
  }
  return found as AnyGovernedTool;
}

function toChildError(
  thrown: unknown,
  onViolation: (violation: SandboxViolation) => void,
): ChildError {
  // fetch wraps connection errors ("fetch failed", cause: the guard's refusal): report the refusal.
  let error = thrown;
  for (
    let cause = thrown;
    typeof cause === 'object' && cause !== null;
    cause = (cause as { cause?: unknown }).cause
  ) {
    if (VeridexError.is(cause, 'sandbox_violation')) error = cause;
  }
  const record = (typeof error === 'object' && error !== null ? error : {}) as Record<
    string,
    unknown
  >;
  if (record.code === 'ERR_ACCESS_DENIED') {
    const capability = PERMISSION_CAPABILITY[String(record.permission)] ?? 'fs';
    const target =
      typeof record.resource === 'string' ? record.resource : String(record.permission);
    const reason = `the process sandbox denies ${String(record.permission)}`;
    onViolation({ capability, target, reason });
    return {
      name: 'VeridexError',
      code: 'sandbox_violation',
      message: `Access to ${target} refused: ${reason}.`,
      details: { capability, reason },
    };
  }
  if (error instanceof EvalError && /Code generation from strings disallowed/.test(error.message)) {
    const reason = 'the process sandbox disallows eval and new Function';
    onViolation({ capability: 'eval', target: 'eval', reason });
    return {
      name: 'VeridexError',
      code: 'sandbox_violation',
      message: `Code generation refused: ${reason}.`,
      details: { capability: 'eval', reason },
    };
  }
  return {
    name: error instanceof Error ? error.name : 'Error',
    message: error instanceof Error ? error.message : String(error),
    ...(VeridexError.is(error) ? { code: error.code, details: scalars(error.details) } : {}),
    ...(record.retryable === true ? { retryable: true } : {}),
  };
}

function scalars(details: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(details).filter(([, value]) => value === null || typeof value !== 'object'),
  );
}

// The parent writes the whole request and closes stdin; a synchronous read is the cheapest
// way to take it (process.stdin would set up a stream on the hot path of every call).
function readStdin(): string {
  const chunks: Buffer[] = [];
  const buffer = Buffer.allocUnsafe(65_536);
  for (;;) {
    let read: number;
    try {
      read = readSync(0, buffer, 0, buffer.length, null);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EAGAIN') continue;
      if ((error as NodeJS.ErrnoException).code === 'EOF') break;
      throw error;
    }
    if (read === 0) break;
    chunks.push(Buffer.from(buffer.subarray(0, read)));
  }
  return Buffer.concat(chunks).toString('utf8');
}

function writeAll(text: string): void {
  const bytes = Buffer.from(text, 'utf8');
  for (let offset = 0; offset < bytes.length; ) {
    try {
      offset += writeSync(RESULT_FD, bytes, offset);
    } catch (error) {
      // The parent stopped reading (output cap): nothing more to say.
      if ((error as NodeJS.ErrnoException).code === 'EAGAIN') continue;
      return;
    }
  }
}
