import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ApprovalManager } from '../../src/approvals/index.js';
import { AuditLog, type TraceEvent } from '../../src/audit/index.js';
import { recordTrace, toMatchTrace } from '../../src/testing/index.js';

expect.extend({ toMatchTrace });

/** A short real audit chain: a proposal, a verdict, an approval request with a fresh id. */
async function run(options: { verdict?: string; thread?: string } = {}): Promise<TraceEvent[]> {
  const audit = new AuditLog();
  const threadId = options.thread ?? `t-${Math.random().toString(16).slice(2)}`;
  await audit.append({
    threadId,
    type: 'tool_proposed',
    payload: { toolName: 'transfer', arguments: { amount: '10.00' } },
  });
  await audit.append({
    threadId,
    type: 'policy_decision',
    payload: {
      toolName: 'transfer',
      verdict: options.verdict ?? 'escalate',
      route: 'human_required',
      reason: 'wording may change',
    },
  });
  await audit.append({
    threadId,
    type: 'approval_requested',
    payload: {
      toolName: 'transfer',
      approvalId: ApprovalManager.approvalId(threadId, 'call_1'),
      requiredApprovals: 1,
      expiresAt: new Date().toISOString(),
    },
  });
  return audit.events(threadId);
}

const saved = { ci: process.env.CI, update: process.env.VERIDEX_UPDATE_TRACES };
afterEach(() => {
  for (const [key, value] of [
    ['CI', saved.ci],
    ['VERIDEX_UPDATE_TRACES', saved.update],
  ] as const) {
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  }
});

describe('recordTrace', () => {
  it('keeps types, order and decision fields, and turns ids and times into patterns', async () => {
    const trace = recordTrace(await run(), {
      fields: ['toolName', 'verdict', 'route', 'approvalId', 'requiredApprovals'],
    });
    expect(trace).toEqual({
      format: 'veridex.trace/v1',
      events: [
        { type: 'tool_proposed', toolName: 'transfer' },
        {
          type: 'policy_decision',
          toolName: 'transfer',
          verdict: 'escalate',
          route: 'human_required',
        },
        {
          type: 'approval_requested',
          toolName: 'transfer',
          approvalId: { $match: '^apr_[0-9a-f]{24}$' },
          requiredApprovals: 1,
        },
      ],
    });
    expect(JSON.stringify(recordTrace(await run()))).not.toMatch(/evt_|"hash"|timestamp|wording/);
  });
});

describe('toMatchTrace', () => {
  const fields = { fields: ['toolName', 'verdict', 'route', 'approvalId', 'requiredApprovals'] };

  it('matches another run with other ids and times', async () => {
    const golden = recordTrace(await run(), fields);
    expect(await run()).toMatchTrace(golden, fields);
  });

  it('fails on a changed verdict, naming the event and showing a diff', async () => {
    const golden = recordTrace(await run(), fields);
    const result = toMatchTrace.call(undefined, await run({ verdict: 'allow' }), golden, fields);
    expect(result.pass).toBe(false);
    expect(result.message()).toContain('differ from the golden trace at event 1');
    expect(result.message()).toContain('verdict="allow"');
    await expect(async () =>
      expect(await run({ verdict: 'deny' })).toMatchTrace(golden, fields),
    ).rejects.toThrow(/at event 1/);
  });

  it('fails on reordered, missing or extra events, and on a volatile value of the wrong shape', async () => {
    const events = await run();
    const golden = recordTrace(events, fields);
    expect([events[1]!, events[0]!, events[2]!]).not.toMatchTrace(golden, fields);
    expect(events.slice(0, 2)).not.toMatchTrace(golden, fields);
    expect([...events, events[0]!]).not.toMatchTrace(golden, fields);
    const forged = structuredClone(events);
    forged[2]!.payload.approvalId = 'apr_not-an-id';
    expect(forged).not.toMatchTrace(golden, fields);
  });

  it('writes a missing golden file outside CI, refuses to in CI, and rewrites it on VERIDEX_UPDATE_TRACES=1', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'veridex-trace-'));
    const file = join(dir, 'run.trace.json');
    process.env.CI = 'true';
    expect(await run()).not.toMatchTrace(file);
    expect(existsSync(file)).toBe(false);

    delete process.env.CI;
    expect(await run()).toMatchTrace(file);
    expect(JSON.parse(readFileSync(file, 'utf8')).events).toHaveLength(3);
    expect(await run()).toMatchTrace(file);
    expect(await run({ verdict: 'allow' })).not.toMatchTrace(file);

    process.env.VERIDEX_UPDATE_TRACES = '1';
    expect(await run({ verdict: 'allow' })).toMatchTrace(file);
    delete process.env.VERIDEX_UPDATE_TRACES;
    expect(await run({ verdict: 'allow' })).toMatchTrace(file);
    expect(await run()).not.toMatchTrace(file);

    writeFileSync(file, JSON.stringify({ format: 'something/else', events: [] }));
    expect(await run()).not.toMatchTrace(file);
  });
});
