import { VeridexError } from '../errors/index.js';
import type { HttpClient } from '../tools/types.js';
import { deniedFs } from './jailed-fs.js';
import { executeWithCapabilities, type Sandbox, type SandboxRunRequest } from './sandbox.js';

/**
 * Refuses every side effect it mediates: the injected `http` and `fs` fail with
 * `sandbox_violation` (and report the attempt, even when the tool catches the error).
 * The default for tests, and for any tool that needs nothing but its input.
 *
 * It runs `execute` in this process: code that imports `node:fs` or `node:child_process`
 * itself is not stopped — only `LocalProcessSandbox` confines what a tool imports.
 *
 * @example await runTool(myTool, args, { sandbox: new DenyAllSandbox() });
 */
export class DenyAllSandbox implements Sandbox {
  readonly kind = 'deny_all';

  run(request: SandboxRunRequest): Promise<unknown> {
    const report = request.onViolation;
    const why = 'the DenyAllSandbox allows no side effects';
    const http: HttpClient = {
      async fetch(input) {
        const target = String(input).slice(0, 200);
        report({ capability: 'http', target, reason: why });
        throw new VeridexError('sandbox_violation', `HTTP request to ${target} refused: ${why}.`, {
          details: { capability: 'http', target, reason: why },
        });
      },
    };
    return executeWithCapabilities(request, { http, fs: deniedFs(report, why) });
  }
}
