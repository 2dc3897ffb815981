import { describe, expect, it } from 'vitest';
import { memoryRules } from '../../src/memory/index.js';
import {
  buildMemoryWriteProposal,
  type MemoryWriteProposal,
  PolicyEngine,
} from '../../src/policy/index.js';
import { describeEachDatabase } from '../support/databases.js';

function proposal(
  overrides: Partial<Omit<MemoryWriteProposal, 'kind' | 'hash'>> = {},
): MemoryWriteProposal {
  return buildMemoryWriteProposal({
    threadId: 'thread-1',
    runId: 'run-1',
    proposer: 'agent',
    writeId: 'w1',
    tier: 'semantic',
    namespace: ['default'],
    content: 'The user likes tea',
    confidence: 0.8,
    source: 'user',
    tags: [],
    ...overrides,
  });
}

describe('memoryRules', () => {
  const engine = new PolicyEngine({
    rules: [
      memoryRules.denySecrets(),
      memoryRules.toolSourcedWrites('deny'),
      memoryRules.minConfidence(0.5),
    ],
  });

  it('allows a clean, confident, user-sourced write', async () => {
    expect((await engine.evaluate(proposal())).verdict).toBe('allow');
  });

  it('denies credential-shaped content, naming the kind but never the value', async () => {
    const decision = await engine.evaluate(
      proposal({ content: 'db url postgres://app:hunter2hunter2@db/prod' }),
    );
    expect(decision).toMatchObject({
      verdict: 'deny',
      ruleId: 'memory.deny_secrets',
      code: 'memory_write_denied',
    });
    expect(decision.verdict === 'deny' && decision.reason).toContain('connection_string_password');
    expect(JSON.stringify(decision)).not.toContain('hunter2hunter2');
  });

  it('denies, unchecked, a write with more text fields than the secret check covers', async () => {
    const tags = (count: number) => Array.from({ length: count }, (_, index) => `t${index}x`);
    expect((await engine.evaluate(proposal({ tags: tags(4_095) }))).verdict).toBe('allow');
    const decision = await engine.evaluate(proposal({ tags: tags(4_096) }));
    expect(decision).toMatchObject({ verdict: 'deny', ruleId: 'memory.deny_secrets' });
    expect(decision.verdict === 'deny' && decision.reason).toContain('4097 text fields');
  });

  it('denies or escalates tool-sourced writes', async () => {
    expect(await engine.evaluate(proposal({ source: 'tool' }))).toMatchObject({
      verdict: 'deny',
      ruleId: 'memory.tool_sourced_writes',
    });
    const escalating = new PolicyEngine({ rules: [memoryRules.toolSourcedWrites('escalate')] });
    expect(await escalating.evaluate(proposal({ source: 'tool' }))).toMatchObject({
      verdict: 'escalate',
      route: 'human_required',
    });
  });

  it('denies writes below the minimum confidence', async () => {
    expect(await engine.evaluate(proposal({ confidence: 0.49 }))).toMatchObject({
      verdict: 'deny',
      ruleId: 'memory.min_confidence',
    });
    expect((await engine.evaluate(proposal({ confidence: 0.5 }))).verdict).toBe('allow');
  });

  it('rejects nonsensical rule settings with config_invalid', () => {
    expect(() => memoryRules.minConfidence(1.5)).toThrow(
      expect.objectContaining({ code: 'config_invalid' }),
    );
    expect(() => memoryRules.writeQuota({ perThread: 0, db: undefined as never })).toThrow(
      expect.objectContaining({ code: 'config_invalid' }),
    );
  });
});

describeEachDatabase('memoryRules.writeQuota', ({ db }) => {
  it('counts writes per thread in the database, re-using a replayed write id', async () => {
    const quota = () =>
      new PolicyEngine({
        rules: [memoryRules.denySecrets(), memoryRules.writeQuota({ perThread: 2, db: db() })],
      });
    const engine = quota();
    expect((await engine.evaluate(proposal({ writeId: 'w1' }))).verdict).toBe('allow');
    expect((await engine.evaluate(proposal({ writeId: 'w1' }))).verdict).toBe('allow');
    expect((await engine.evaluate(proposal({ writeId: 'w2' }))).verdict).toBe('allow');
    const restarted = quota();
    expect(await restarted.evaluate(proposal({ writeId: 'w3' }))).toMatchObject({
      verdict: 'deny',
      ruleId: 'memory.write_quota',
      code: 'memory_write_denied',
    });
    expect((await restarted.evaluate(proposal({ writeId: 'w1' }))).verdict).toBe('allow');
    expect(
      (await restarted.evaluate(proposal({ writeId: 'w3', threadId: 'thread-2' }))).verdict,
    ).toBe('allow');
  });

  it('does not consume quota for a write another rule denies', async () => {
    const engine = new PolicyEngine({
      rules: [memoryRules.denySecrets(), memoryRules.writeQuota({ perThread: 1, db: db() })],
    });
    const secret = proposal({
      writeId: 'secret',
      content: 'token ghp_0123456789abcdefghijklmnopqrstuvwxyzAB',
    });
    expect((await engine.evaluate(secret)).ruleId).toBe('memory.deny_secrets');
    expect((await engine.evaluate(proposal({ writeId: 'clean' }))).verdict).toBe('allow');
  });
});
