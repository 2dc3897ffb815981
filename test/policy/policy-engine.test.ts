import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AuditLog } from '../../src/audit/index.js';
import {
  buildToolProposal,
  compareDecimal,
  MemoryUsageStore,
  PolicyEngine,
  PostgresUsageStore,
  policyPack,
  policyRule,
  rules,
  type UsageStore,
} from '../../src/policy/index.js';
import type { AnyGovernedTool, SafetyClass } from '../../src/tools/index.js';
import { describeEachDatabase } from '../support/databases.js';

function fakeTool(
  name: string,
  safetyClass: SafetyClass,
  extra: Record<string, unknown> = {},
): AnyGovernedTool {
  return {
    name,
    safetyClass,
    schemaHash: 'h'.repeat(64),
    trust: 'local',
    ...extra,
  } as unknown as AnyGovernedTool;
}

function call(
  tool: AnyGovernedTool,
  args: Record<string, unknown> = {},
  toolCallId = 'call_1',
  runId = 'run-1',
) {
  return buildToolProposal({
    tool,
    arguments: args,
    threadId: 'thread-1',
    runId,
    toolCallId,
    proposer: 'bot',
  });
}

describe('PolicyEngine', () => {
  it('applies the safety-class defaults when no rule objects', async () => {
    const engine = new PolicyEngine();
    const verdict = async (tool: AnyGovernedTool) => (await engine.evaluate(call(tool))).verdict;
    expect(await verdict(fakeTool('search', 'read'))).toBe('allow');
    expect(await verdict(fakeTool('update', 'write'))).toBe('allow');
    expect(await verdict(fakeTool('fetch', 'network'))).toBe('deny');
    expect(
      await verdict(
        fakeTool('fetch', 'network', { sandbox: { networkAllowlist: ['api.example.com'] } }),
      ),
    ).toBe('allow');
    expect(await engine.evaluate(call(fakeTool('transfer', 'financial')))).toMatchObject({
      verdict: 'escalate',
      route: 'human_required',
    });
    expect(await engine.evaluate(call(fakeTool('rotate', 'privileged')))).toMatchObject({
      verdict: 'escalate',
      route: 'dual_approval',
    });
  });

  it('lets a tool make its approval stricter but never looser', async () => {
    const engine = new PolicyEngine();
    const stricter = fakeTool('export', 'read', { approval: { route: 'human_required' } });
    const looser = fakeTool('transfer', 'financial', { approval: { route: 'auto' } });
    expect(await engine.evaluate(call(stricter))).toMatchObject({
      verdict: 'escalate',
      route: 'human_required',
    });
    expect(await engine.evaluate(call(looser))).toMatchObject({
      verdict: 'escalate',
      route: 'human_required',
    });
  });

  it('decides by the highest priority with an opinion, most restrictive first within it', async () => {
    const rule = (id: string, priority: number, verdict: 'allow' | 'deny' | 'escalate') =>
      policyRule({
        id,
        name: id,
        priority,
        evaluate: () =>
          verdict === 'escalate'
            ? { verdict, route: 'dual_approval', reason: id }
            : verdict === 'deny'
              ? { verdict, reason: id }
              : { verdict },
      });
    const tool = fakeTool('transfer', 'financial');
    const equal = new PolicyEngine({
      rules: [rule('a', 5, 'allow'), rule('e', 5, 'escalate'), rule('d', 1, 'deny')],
    });
    expect(await equal.evaluate(call(tool))).toMatchObject({ verdict: 'escalate', ruleId: 'e' });
    const denyWins = new PolicyEngine({
      rules: [rule('a', 5, 'allow'), rule('e', 5, 'escalate'), rule('d', 5, 'deny')],
    });
    expect(await denyWins.evaluate(call(tool))).toMatchObject({ verdict: 'deny', ruleId: 'd' });
    const higherAllow = new PolicyEngine({ rules: [rule('d', 1, 'deny'), rule('a', 9, 'allow')] });
    expect(await higherAllow.evaluate(call(tool))).toMatchObject({ verdict: 'allow', ruleId: 'a' });
  });

  it('fails closed when a rule throws, with a policy_error event', async () => {
    const audit = new AuditLog();
    const engine = new PolicyEngine({
      audit,
      rules: [
        policyRule({
          id: 'broken',
          name: 'Broken',
          priority: 5,
          evaluate: () => {
            throw new Error('lookup failed');
          },
        }),
        policyRule({
          id: 'lenient',
          name: 'Lenient',
          priority: 5,
          evaluate: () => ({ verdict: 'allow' }),
        }),
      ],
    });
    const decision = await engine.evaluate(call(fakeTool('search', 'read')));
    expect(decision).toMatchObject({ verdict: 'deny', ruleId: 'broken', code: 'policy_error' });
    expect(decision.reason).toContain('lookup failed');
    const events = await audit.events('thread-1');
    expect(events.map((event) => event.type)).toEqual(['policy_error', 'policy_decision']);
    expect(events[1]?.payload).toMatchObject({
      verdict: 'deny',
      ruleId: 'broken',
      toolName: 'search',
    });
  });

  it('writes one policy_decision event per proposal even when re-evaluated', async () => {
    const audit = new AuditLog();
    const engine = new PolicyEngine({ audit });
    const proposal = call(fakeTool('search', 'read'));
    await engine.evaluate(proposal);
    await engine.evaluate(proposal);
    expect(await audit.events('thread-1')).toHaveLength(1);
  });

  it('skips rules that do not apply to the proposal kind', async () => {
    const engine = new PolicyEngine({
      rules: [
        policyRule({
          id: 'memory-only',
          name: 'm',
          priority: 5,
          appliesTo: ['memory_write'],
          evaluate: () => ({ verdict: 'deny', reason: 'no' }),
        }),
      ],
    });
    expect((await engine.evaluate(call(fakeTool('search', 'read')))).verdict).toBe('allow');
  });

  it('rejects malformed rules at definition time', () => {
    expect(() => policyRule({ id: '', name: 'x', priority: 1, evaluate: () => undefined })).toThrow(
      /id/,
    );
    expect(() =>
      policyRule({ id: 'x', name: 'x', priority: Number.NaN, evaluate: () => undefined }),
    ).toThrow(/priority/);
  });
});

describe('rules', () => {
  it('denies listed tools and everything off an allowlist', async () => {
    const engine = new PolicyEngine({
      rules: [rules.denyTools(['shell']), rules.onlyTools(['search', 'shell'])],
    });
    expect(await engine.evaluate(call(fakeTool('shell', 'read')))).toMatchObject({
      verdict: 'deny',
      ruleId: 'deny_tools',
    });
    expect(await engine.evaluate(call(fakeTool('other', 'read')))).toMatchObject({
      verdict: 'deny',
      ruleId: 'only_tools',
    });
    expect((await engine.evaluate(call(fakeTool('search', 'read')))).verdict).toBe('allow');
  });

  it('lets an explicit allow rule run a financial tool without approval', async () => {
    const engine = new PolicyEngine({ rules: [rules.allowTools(['refund'])] });
    expect(await engine.evaluate(call(fakeTool('refund', 'financial')))).toMatchObject({
      verdict: 'allow',
      ruleId: 'allow_tools',
    });
  });

  it('escalates at and above a decimal threshold, compared exactly', async () => {
    const engine = new PolicyEngine({
      rules: [
        rules.argumentThreshold({
          tools: ['transfer'],
          argument: 'amount',
          atLeast: '10000',
          route: 'dual_approval',
        }),
      ],
      safetyClassDefaults: false,
    });
    const transfer = fakeTool('transfer', 'financial');
    expect((await engine.evaluate(call(transfer, { amount: '9999.99' }))).verdict).toBe('allow');
    expect(await engine.evaluate(call(transfer, { amount: '10000.00' }))).toMatchObject({
      verdict: 'escalate',
      route: 'dual_approval',
    });
    expect(await engine.evaluate(call(transfer, { amount: '1e6' }))).toMatchObject({
      verdict: 'deny',
    });
    expect(await engine.evaluate(call(transfer, { amount: '50,000' }))).toMatchObject({
      verdict: 'deny',
    });
  });

  it('compares decimals like exact rational numbers (property)', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: -(10n ** 20n), max: 10n ** 20n }),
        fc.nat(6),
        fc.bigInt({ min: -(10n ** 20n), max: 10n ** 20n }),
        fc.nat(6),
        (a, sa, b, sb) => {
          const text = (units: bigint, scale: number) => {
            const negative = units < 0n;
            const digits = (negative ? -units : units).toString().padStart(scale + 1, '0');
            const body =
              scale === 0 ? digits : `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
            return negative ? `-${body}` : body;
          };
          const left = a * 10n ** BigInt(6 - sa);
          const right = b * 10n ** BigInt(6 - sb);
          const expected = left === right ? 0 : left > right ? 1 : -1;
          expect(compareDecimal(text(a, sa), text(b, sb))).toBe(expected);
        },
      ),
    );
  });

  it('prefixes rule ids of a policy pack', async () => {
    const pack = policyPack('treasury', [rules.denyTools(['mint'])]);
    const engine = new PolicyEngine({ rules: pack });
    expect(await engine.evaluate(call(fakeTool('mint', 'financial')))).toMatchObject({
      verdict: 'deny',
      ruleId: 'treasury.deny_tools',
    });
  });
});

function usageContract(makeStore: () => UsageStore) {
  it('spends fuel per call with per-tool costs and denies past the run budget', async () => {
    const engine = new PolicyEngine({
      rules: [rules.callLimit({ perRun: 5, costs: { search: 2 }, store: makeStore() })],
    });
    const search = fakeTool('search', 'read');
    expect((await engine.evaluate(call(search, {}, 'c1'))).verdict).toBe('allow');
    expect((await engine.evaluate(call(search, {}, 'c2'))).verdict).toBe('allow');
    const third = await engine.evaluate(call(search, {}, 'c3'));
    expect(third).toMatchObject({ verdict: 'deny', code: 'budget_exhausted' });
    expect(third.reason).toContain('4 of 5');
    // A cheaper tool still fits, and another run has its own budget.
    expect((await engine.evaluate(call(fakeTool('lookup', 'read'), {}, 'c4'))).verdict).toBe(
      'allow',
    );
    expect((await engine.evaluate(call(search, {}, 'c5', 'run-2'))).verdict).toBe('allow');
  });

  it('does not charge a re-evaluated proposal twice (LangGraph re-runs nodes)', async () => {
    const engine = new PolicyEngine({
      rules: [rules.callLimit({ perThread: 1, store: makeStore() })],
    });
    const proposal = call(fakeTool('search', 'read'));
    for (let attempt = 0; attempt < 3; attempt++)
      expect((await engine.evaluate(proposal)).verdict).toBe('allow');
    expect((await engine.evaluate(call(fakeTool('search', 'read'), {}, 'call_2'))).verdict).toBe(
      'deny',
    );
  });

  it('rate-limits a tool within its window and frees it after', async () => {
    let now = Date.parse('2026-01-01T00:00:00Z');
    const engine = new PolicyEngine({
      now: () => new Date(now),
      rules: [
        rules.rateLimit({ tools: ['send_email'], limit: 2, windowMs: 60_000, store: makeStore() }),
      ],
      safetyClassDefaults: false,
    });
    const email = fakeTool('send_email', 'network');
    expect((await engine.evaluate(call(email, {}, 'e1'))).verdict).toBe('allow');
    expect((await engine.evaluate(call(email, {}, 'e2'))).verdict).toBe('allow');
    expect(await engine.evaluate(call(email, {}, 'e3'))).toMatchObject({
      verdict: 'deny',
      code: 'rate_limited',
    });
    now += 60_001;
    expect((await engine.evaluate(call(email, {}, 'e4'))).verdict).toBe('allow');
  });
}

describe('usage rules in memory', () => usageContract(() => new MemoryUsageStore()));

describeEachDatabase('usage rules on PostgresUsageStore', ({ db, open }) => {
  usageContract(() => new PostgresUsageStore(db()));

  it('never lets two connections take the last unit of a budget', async () => {
    const stores = [new PostgresUsageStore(db()), new PostgresUsageStore(await open())];
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, index) =>
        stores[index % 2]!.consume({
          scope: 'fuel:thread:x',
          proposalHash: `p${index}`,
          cost: 1,
          limit: 3,
          now: new Date(),
        }),
      ),
    );
    expect(results.filter((result) => result.allowed)).toHaveLength(3);
  });
});
