import {
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AuditLog } from '../../src/audit/index.js';
import { DenyAllSandbox, InProcessSandbox } from '../../src/sandbox/index.js';
import { executeTool } from '../../src/tools/execute-tool.js';
import { type ToolExecuteArgs, tool } from '../../src/tools/index.js';

const base = realpathSync(mkdtempSync(join(tmpdir(), 'veridex-sandbox-')));
writeFileSync(join(base, 'outside.txt'), 'outside');
afterAll(() => rmSync(base, { recursive: true, force: true }));

function actionTool(
  action: (args: ToolExecuteArgs<{ target: string }>) => Promise<string>,
  allowlist?: string[],
) {
  return tool({
    name: 'act',
    description: 'Does one side effect.',
    safetyClass: 'network',
    input: z.object({ target: z.string() }),
    output: z.object({ result: z.string() }),
    ...(allowlist ? { sandbox: { networkAllowlist: allowlist } } : {}),
    async execute(args) {
      return { result: await action(args) };
    },
  });
}

const fetchIt = actionTool(
  async ({ input, http }) => (await http.fetch(input.target)).text(),
  ['api.example.com'],
);
const readIt = actionTool(async ({ input, fs }) => fs.readText(input.target));
const writeIt = actionTool(async ({ input, fs }) => {
  await fs.writeFile(input.target, 'written');
  return 'ok';
});
const fakeFetch = (async () => new Response('pong')) as unknown as typeof fetch;

describe('DenyAllSandbox', () => {
  it.each([
    ['http', fetchIt, 'https://api.example.com/'],
    ['fs read', readIt, 'a.txt'],
    ['fs write', writeIt, 'a.txt'],
  ])('refuses %s with sandbox_violation and a security_event', async (_label, subject, target) => {
    const audit = new AuditLog();
    const result = await executeTool(
      subject,
      { target },
      { sandbox: new DenyAllSandbox(), audit, threadId: 't', toolCallId: 'c' },
    );
    expect(result).toMatchObject({ status: 'error', code: 'sandbox_violation' });
    const events = await audit.events('t');
    expect(events.map((event) => event.type)).toEqual(['security_event', 'tool_failed']);
    expect(events[0]!.payload).toMatchObject({
      reason: 'sandbox_violation',
      violations: [expect.objectContaining({ reason: expect.stringMatching(/DenyAllSandbox/) })],
    });
  });

  it('is the default sandbox of executeTool', async () => {
    expect(await executeTool(readIt, { target: 'a.txt' })).toMatchObject({
      code: 'sandbox_violation',
    });
  });

  it('records a violation even when the tool swallows the error', async () => {
    const sneaky = actionTool(
      async ({ http }) => {
        await http.fetch('https://api.example.com/').catch(() => undefined);
        return 'nothing to see';
      },
      ['api.example.com'],
    );
    const audit = new AuditLog();
    const result = await executeTool(
      sneaky,
      { target: '' },
      { audit, threadId: 't', toolCallId: 'c' },
    );
    expect(result.status).toBe('success');
    const [security] = await audit.events('t');
    expect(security).toMatchObject({
      type: 'security_event',
      payload: { reason: 'sandbox_violation' },
    });
  });
});

describe('InProcessSandbox', () => {
  const jail = mkdtempSync(join(base, 'jail-'));
  writeFileSync(join(jail, 'a.txt'), 'inside');
  symlinkSync(join(base, 'outside.txt'), join(jail, 'link.txt'));
  const sandbox = new InProcessSandbox({
    jailRoot: jail,
    networkAllowlist: ['*.example.com'],
    fetch: fakeFetch,
  });

  it('reaches a host on both the tool and the operator allowlist', async () => {
    expect(
      await executeTool(fetchIt, { target: 'https://api.example.com/ping' }, { sandbox }),
    ).toMatchObject({ status: 'success', output: { result: 'pong' } });
  });

  it('refuses hosts missing from either allowlist, and every host for a tool that declares none', async () => {
    const operatorOnly = new InProcessSandbox({
      networkAllowlist: ['other.example.org'],
      fetch: fakeFetch,
    });
    expect(
      await executeTool(fetchIt, { target: 'https://api.example.com/' }, { sandbox: operatorOnly }),
    ).toMatchObject({ code: 'sandbox_violation' });
    const undeclared = actionTool(async ({ input, http }) =>
      (await http.fetch(input.target)).text(),
    );
    expect(
      await executeTool(undeclared, { target: 'https://api.example.com/' }, { sandbox }),
    ).toMatchObject({ code: 'sandbox_violation' });
  });

  it('reads and writes inside the jail', async () => {
    expect(await executeTool(readIt, { target: 'a.txt' }, { sandbox })).toMatchObject({
      output: { result: 'inside' },
    });
    expect(await executeTool(writeIt, { target: 'out/new.txt' }, { sandbox })).toMatchObject({
      status: 'success',
    });
    expect(readFileSync(join(jail, 'out', 'new.txt'), 'utf8')).toBe('written');
  });

  it.each(['../outside.txt', '/etc/passwd', 'link.txt'])('refuses to read %s', async (target) => {
    expect(await executeTool(readIt, { target }, { sandbox })).toMatchObject({
      status: 'error',
      code: 'sandbox_violation',
    });
  });

  it('refuses all file access without a jailRoot', async () => {
    expect(
      await executeTool(readIt, { target: 'a.txt' }, { sandbox: new InProcessSandbox() }),
    ).toMatchObject({ code: 'sandbox_violation' });
  });

  it('rejects a malformed operator allowlist at construction', () => {
    expect(() => new InProcessSandbox({ networkAllowlist: ['https://x.com/'] })).toThrow(
      expect.objectContaining({ code: 'config_invalid' }),
    );
  });
});
