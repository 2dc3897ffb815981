import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import {
  InProcessSandbox,
  IsolatedProcessSandbox,
  LocalProcessSandbox,
  type Sandbox,
  type SandboxRunRequest,
} from '../src/sandbox/index.js';
import { executeTool } from '../src/tools/execute-tool.js';
import { tool } from '../src/tools/index.js';
import { median, ms } from './stats.js';

// The child imports this very file to find the tool (sandbox.module), so it only defines.
export const shout = tool({
  name: 'shout',
  description: 'Upper-cases a text.',
  safetyClass: 'read',
  input: z.object({ text: z.string() }),
  output: z.object({ text: z.string() }),
  sandbox: { module: import.meta.url },
  async execute({ input }) {
    return { text: input.text.toUpperCase() };
  },
});

function spawnNode(): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', '0'], { env: {}, stdio: 'ignore' });
    child.on('error', reject);
    child.on('close', () => resolve());
  });
}

function inProcessFs(root: string) {
  const refuse = async () => {
    throw new Error('unused');
  };
  return {
    root,
    readFile: refuse,
    readText: refuse,
    writeFile: refuse,
    list: refuse,
    remove: refuse,
  };
}

function request(signal: AbortSignal): SandboxRunRequest {
  return {
    tool: shout,
    input: { text: 'hello' },
    secrets: {
      get: () => {
        throw new Error('no secrets');
      },
    },
    idempotencyKey: 'idem_bench',
    signal,
    context: {
      threadId: 't',
      toolCallId: 'c',
      runId: 't',
      proposalHash: '',
      approvedBy: [],
      metadata: {},
    },
    onViolation: () => undefined,
  };
}

/** Median of 15 prewarmed calls, each after a 150 ms pause (an agent's model turn). */
async function prewarmedMs(sandbox: Sandbox & { close(): void }): Promise<number> {
  const samples: number[] = [];
  try {
    await executeTool(shout, { text: 'warm' }, { sandbox });
    for (let call = 0; call < 15; call++) {
      await new Promise((resolve) => setTimeout(resolve, 150));
      const start = performance.now();
      await executeTool(shout, { text: 'hello' }, { sandbox });
      samples.push(performance.now() - start);
    }
  } finally {
    sandbox.close();
  }
  return median(samples);
}

/**
 * `npm run bench -- sandbox`: cold call latency of LocalProcessSandbox and IsolatedProcessSandbox
 * (a fresh child process per call, through runTool; the isolated one inside bubblewrap
 * namespaces) next to a bare `node -e 0` spawn, interleaved so that both see the same machine
 * load; the same with `prewarm`; and the per-call overhead of InProcessSandbox over calling
 * execute directly.
 */
export async function run(): Promise<void> {
  const jail = mkdtempSync(join(tmpdir(), 'veridex-bench-'));
  try {
    const child = new LocalProcessSandbox({ jailRoot: jail });
    const availability = IsolatedProcessSandbox.availability();
    const isolated = availability.available
      ? new IsolatedProcessSandbox({ jailRoot: jail })
      : undefined;
    if (!isolated && !availability.available)
      console.log(`(isolated skipped: ${availability.reason})`);
    // The first call bundles the tool module once per process; cold calls start after that.
    for (const sandbox of [child, ...(isolated ? [isolated] : [])]) {
      const first = await executeTool(shout, { text: 'warm' }, { sandbox });
      if (first.status !== 'success')
        throw new Error(`sandbox call failed: ${JSON.stringify(first)}`);
    }
    const spawnSamples: number[] = [];
    const coldSamples: number[] = [];
    const isolatedSamples: number[] = [];
    const time = async (samples: number[], fn: () => Promise<unknown>) => {
      const start = performance.now();
      await fn();
      samples.push(performance.now() - start);
    };
    for (let round = 0; round < 15; round++) {
      await time(spawnSamples, spawnNode);
      await time(coldSamples, () => executeTool(shout, { text: 'hello' }, { sandbox: child }));
      if (isolated) {
        await time(isolatedSamples, () =>
          executeTool(shout, { text: 'hello' }, { sandbox: isolated }),
        );
      }
    }
    const spawnMs = median(spawnSamples);
    const coldMs = median(coldSamples);
    const isolatedMs = median(isolatedSamples);
    const warmMs = await prewarmedMs(new LocalProcessSandbox({ jailRoot: jail, prewarm: true }));
    const isolatedWarmMs = isolated
      ? await prewarmedMs(new IsolatedProcessSandbox({ jailRoot: jail, prewarm: true }))
      : Number.NaN;
    console.log(`node -e 0 spawn:                     ${ms(spawnMs)} ms (median of 15)`);
    console.log(
      `LocalProcessSandbox cold call:       ${ms(coldMs)} ms (median of 15, via runTool)`,
    );
    console.log(
      `IsolatedProcessSandbox cold call:    ${ms(isolatedMs)} ms (median of 15, ${(isolatedMs / coldMs).toFixed(2)}× LocalProcessSandbox)`,
    );
    console.log(
      `LocalProcessSandbox prewarm call:    ${ms(warmMs)} ms (median of 15, fresh process started ahead)`,
    );
    console.log(
      `IsolatedProcessSandbox prewarm call: ${ms(isolatedWarmMs)} ms (median of 15, fresh sandbox started ahead)`,
    );

    const inProcess = new InProcessSandbox({
      jailRoot: jail,
      networkAllowlist: ['api.example.com'],
    });
    const signal = new AbortController().signal;
    const rounds = 20_000;
    const perCall = async (fn: () => Promise<unknown>) => {
      for (let index = 0; index < 2_000; index++) await fn();
      const samples: number[] = [];
      for (let batch = 0; batch < 15; batch++) {
        const start = performance.now();
        for (let index = 0; index < rounds / 10; index++) await fn();
        samples.push(((performance.now() - start) * 1000) / (rounds / 10));
      }
      return median(samples);
    };
    const req = request(signal);
    const directArgs = {
      input: req.input as { text: string },
      secrets: req.secrets,
      idempotencyKey: req.idempotencyKey,
      signal,
      context: req.context,
      http: { fetch },
      fs: inProcessFs(jail),
    };
    const direct = await perCall(() => shout.execute(directArgs));
    const sandboxed = await perCall(() => inProcess.run(req));
    const viaRunTool = await perCall(() =>
      executeTool(shout, { text: 'hello' }, { sandbox: inProcess }),
    );
    const overhead = Math.max(0, sandboxed - direct);
    console.log(`execute() directly:               ${direct.toFixed(2)} µs per call`);
    console.log(
      `InProcessSandbox.run():           ${sandboxed.toFixed(2)} µs per call (overhead ${overhead.toFixed(2)} µs)`,
    );
    console.log(
      `executeTool() with InProcessSandbox:  ${viaRunTool.toFixed(2)} µs per call (whole pipeline)`,
    );
    console.log(
      `RESULT sandbox child_cold_ms=${coldMs.toFixed(1)} inprocess_us=${overhead.toFixed(2)} node_spawn_ms=${spawnMs.toFixed(1)} child_prewarm_ms=${warmMs.toFixed(1)} runtool_inprocess_us=${viaRunTool.toFixed(2)} isolated_cold_ms=${isolatedMs.toFixed(1)} isolated_ratio=${(isolatedMs / coldMs).toFixed(2)} isolated_prewarm_ms=${isolatedWarmMs.toFixed(1)}`,
    );
  } finally {
    rmSync(jail, { recursive: true, force: true });
  }
}
