import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditLog } from '../../src/audit/index.js';
import { LocalProcessSandbox } from '../../src/sandbox/index.js';
import { executeTool } from '../../src/tools/execute-tool.js';
import { type AnyGovernedTool, SecretsProvider, tool } from '../../src/tools/index.js';
import * as hostile from './fixtures/hostile-tools.js';

const base = realpathSync(mkdtempSync(join(tmpdir(), 'veridex-child-')));
const jail = join(base, 'jail');
const outsideFile = join(base, 'outside.txt');
mkdirSync(jail);
writeFileSync(join(jail, 'inside.txt'), 'inside');
writeFileSync(outsideFile, 'outside secret');
symlinkSync(outsideFile, join(jail, 'link.txt'));

let server: Server;
let port = 0;
beforeAll(async () => {
  server = createServer((_request, response) => response.end('pong'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  rmSync(base, { recursive: true, force: true });
});

const sandbox = new LocalProcessSandbox({
  jailRoot: jail,
  cpuMs: 2_000,
  memoryMb: 64,
  timeoutMs: 10_000,
  maxOutputBytes: 64 * 1024,
});

async function run(subject: AnyGovernedTool, arg: string, box = sandbox, extra: object = {}) {
  const audit = new AuditLog();
  const result = await executeTool(
    subject,
    { arg },
    { sandbox: box, audit, threadId: 't', toolCallId: 'c', ...extra },
  );
  return { result, events: await audit.events('t') };
}

describe('LocalProcessSandbox', () => {
  it('runs the tool in a child process and returns its validated output', async () => {
    const { result } = await run(hostile.upper, 'hello');
    expect(result).toMatchObject({ status: 'success', output: { result: 'HELLO' } });
  });

  it('refuses a raw node:fs read outside the jail (permission model) with a security_event', async () => {
    const { result, events } = await run(hostile.readRaw, outsideFile);
    expect(result).toMatchObject({ status: 'error', code: 'sandbox_violation' });
    expect(events[0]).toMatchObject({
      type: 'security_event',
      payload: {
        reason: 'sandbox_violation',
        violations: [expect.objectContaining({ capability: 'fs' })],
      },
    });
  });

  it('allows raw reads inside the jail', async () => {
    expect((await run(hostile.readRaw, join(jail, 'inside.txt'))).result).toMatchObject({
      output: { result: 'inside' },
    });
  });

  it('refuses a raw node:fs write outside the jail', async () => {
    const target = join(base, 'pwned.txt');
    expect((await run(hostile.writeRaw, target)).result).toMatchObject({
      code: 'sandbox_violation',
    });
    expect(existsSync(target)).toBe(false);
  });

  it('refuses to start a child process', async () => {
    const { result, events } = await run(hostile.spawnShell, 'id');
    expect(result).toMatchObject({ code: 'sandbox_violation' });
    expect(events[0]!.payload).toMatchObject({
      violations: [expect.objectContaining({ capability: 'process' })],
    });
  });

  it('refuses to start a worker thread', async () => {
    expect((await run(hostile.startWorker, '')).result).toMatchObject({
      code: 'sandbox_violation',
    });
  });

  it('refuses eval / new Function', async () => {
    const { result, events } = await run(hostile.useEval, '1 + 1');
    expect(result).toMatchObject({ code: 'sandbox_violation' });
    expect(events[0]!.payload).toMatchObject({
      violations: [expect.objectContaining({ capability: 'eval' })],
    });
  });

  it('gives the child an empty environment except the allowlist', async () => {
    process.env.VERIDEX_TEST_VISIBLE = 'yes';
    process.env.VERIDEX_TEST_HIDDEN = 'no';
    const box = new LocalProcessSandbox({ jailRoot: jail, envAllowlist: ['VERIDEX_TEST_VISIBLE'] });
    expect((await run(hostile.listEnv, '', box)).result).toMatchObject({
      output: { result: 'VERIDEX_TEST_VISIBLE' },
    });
  });

  it('passes declared secrets on stdin (not the environment) and redacts them from the output', async () => {
    const secrets = SecretsProvider.fromMap({ API_TOKEN: 'tok-0123456789-secret' });
    const { result, events } = await run(hostile.echoSecret, '', sandbox, { secrets });
    expect(result).toMatchObject({
      status: 'success',
      content: '{"result":"key=[REDACTED:API_TOKEN]"}',
    });
    expect(JSON.stringify(events)).not.toContain('tok-0123456789-secret');
    expect((await run(hostile.listEnv, '', sandbox, { secrets })).result).toMatchObject({
      output: { result: '' },
    });
  });

  it('kills a tool that burns more CPU than cpuMs', async () => {
    const box = new LocalProcessSandbox({ jailRoot: jail, cpuMs: 300, timeoutMs: 10_000 });
    const started = Date.now();
    const { result } = await run(hostile.burnCpu, '', box);
    expect(result).toMatchObject({ code: 'sandbox_limit_exceeded', details: { limit: 'cpu' } });
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('stops a tool whose heap outgrows memoryMb', async () => {
    expect((await run(hostile.growHeap, '')).result).toMatchObject({
      code: 'sandbox_limit_exceeded',
      details: { limit: 'memory' },
    });
  });

  it('kills a tool whose buffers (outside the V8 heap) outgrow the memory limit', async () => {
    expect((await run(hostile.growBuffers, '')).result).toMatchObject({
      code: 'sandbox_limit_exceeded',
      details: { limit: 'memory' },
    });
  });

  it('kills a tool that runs past the wall-clock timeout', async () => {
    const box = new LocalProcessSandbox({ jailRoot: jail, timeoutMs: 300 });
    expect((await run(hostile.hang, '', box)).result).toMatchObject({
      code: 'sandbox_limit_exceeded',
      details: { limit: 'time' },
    });
  });

  it('reports a tool whose promise can never settle instead of waiting for the timeout', async () => {
    const { result } = await run(hostile.abandon, '');
    expect(result).toMatchObject({
      code: 'tool_failed',
      message: expect.stringMatching(/never settled/),
    });
  });

  it('kills the child when executeTool times out (tool timeoutMs aborts the signal)', async () => {
    const quick = tool({ ...hostile.hang, timeoutMs: 200 });
    expect((await run(quick, '')).result).toMatchObject({ code: 'tool_timeout' });
  });

  it('stops a tool whose result exceeds maxOutputBytes', async () => {
    expect((await run(hostile.flood, String(1024 * 1024))).result).toMatchObject({
      code: 'sandbox_limit_exceeded',
      details: { limit: 'output' },
    });
    expect((await run(hostile.flood, '1000')).result).toMatchObject({ status: 'success' });
  });

  it('refuses raw network access (fetch, sockets) to hosts off the allowlist', async () => {
    const box = new LocalProcessSandbox({ jailRoot: jail });
    expect((await run(hostile.rawFetch, `http://127.0.0.1:${port}/`, box)).result).toMatchObject({
      code: 'sandbox_violation',
    });
    expect((await run(hostile.rawSocket, String(port), box)).result).toMatchObject({
      code: 'sandbox_violation',
    });
  });

  it('reaches an allowlisted host through the injected http client', async () => {
    const box = new LocalProcessSandbox({ jailRoot: jail, allowHttp: true });
    expect(
      (await run(hostile.allowedFetch, `http://127.0.0.1:${port}/`, box)).result,
    ).toMatchObject({ output: { result: 'pong' } });
  });

  it('refuses the injected fs a symlink that leads outside the jail', async () => {
    expect((await run(hostile.readJailed, 'link.txt')).result).toMatchObject({
      code: 'sandbox_violation',
    });
  });

  it('documents a Node 20 limit: a raw read through a symlink planted inside the jail is not blocked', async () => {
    // If this starts failing, Node closed the gap: update the README's "Sandboxes" limits.
    expect((await run(hostile.readRaw, join(jail, 'link.txt'))).result).toMatchObject({
      output: { result: readFileSync(outsideFile, 'utf8') },
    });
  });

  it('enforces the same limits when children load the bundle instead of a snapshot', async () => {
    // Loading the bundle costs CPU: a loaded machine must not turn a refusal into a CPU stop.
    const box = new LocalProcessSandbox({ jailRoot: jail, startup: 'bundle' });
    const tight = new LocalProcessSandbox({ jailRoot: jail, startup: 'bundle', cpuMs: 300 });
    expect((await run(hostile.upper, 'ok', box)).result).toMatchObject({
      output: { result: 'OK' },
    });
    expect((await run(hostile.readRaw, outsideFile, box)).result).toMatchObject({
      code: 'sandbox_violation',
    });
    expect((await run(hostile.spawnShell, 'id', box)).result).toMatchObject({
      code: 'sandbox_violation',
    });
    expect((await run(hostile.rawSocket, String(port), box)).result).toMatchObject({
      code: 'sandbox_violation',
    });
    expect((await run(hostile.burnCpu, '', tight)).result).toMatchObject({
      details: { limit: 'cpu' },
    });
  });

  it('with prewarm, runs every call in a fresh process started ahead of time, limits intact', async () => {
    const box = new LocalProcessSandbox({ jailRoot: jail, prewarm: true, cpuMs: 300 });
    try {
      const answers: string[] = [];
      for (let call = 0; call < 3; call++) {
        const { result } = await run(hostile.whoami, '', box);
        answers.push((result as { output: { result: string } }).output.result);
      }
      expect(new Set(answers.map((answer) => answer.split(':')[0])).size).toBe(3);
      expect(answers.map((answer) => answer.split(':')[1])).toEqual(['1', '1', '1']);
      expect((await run(hostile.burnCpu, '', box)).result).toMatchObject({
        details: { limit: 'cpu' },
      });
      expect((await run(hostile.readRaw, outsideFile, box)).result).toMatchObject({
        code: 'sandbox_violation',
      });
    } finally {
      box.close();
    }
  });

  it('refuses a tool that does not declare its module', async () => {
    const undeclared = tool({ ...hostile.upper, name: 'undeclared', sandbox: {} });
    expect((await run(undeclared, 'x')).result).toMatchObject({ code: 'config_invalid' });
  });

  it('refuses a jail that does not exist', () => {
    expect(() => new LocalProcessSandbox({ jailRoot: join(base, 'missing') })).toThrow(
      expect.objectContaining({ code: 'config_invalid' }),
    );
  });
});
