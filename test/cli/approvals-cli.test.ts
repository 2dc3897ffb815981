import { describe, expect, it } from 'vitest';
import { ApprovalManager } from '../../src/approvals/index.js';
import { runCli } from '../../src/cli/index.js';
import { createDatabase, migrate } from '../../src/db/index.js';
import { buildToolProposal, type PolicyDecision } from '../../src/policy/index.js';
import type { AnyGovernedTool } from '../../src/tools/index.js';
import { postgresUrl, uniqueSchema } from '../support/databases.js';

function capture() {
  const lines = { out: [] as string[], err: [] as string[] };
  return {
    io: { out: (line = '') => lines.out.push(line), err: (line = '') => lines.err.push(line) },
    lines,
  };
}

const transfer = {
  name: 'transfer',
  schemaHash: 'a'.repeat(64),
  safetyClass: 'financial',
  trust: 'local',
} as unknown as AnyGovernedTool;
const escalate = {
  verdict: 'escalate',
  route: 'human_required',
  reason: 'financial',
  ruleId: 'default.safety_class',
  ruleName: 'defaults',
  evaluations: [],
} as Extract<PolicyDecision, { verdict: 'escalate' }>;

describe('veridex approvals usage', () => {
  it('exits 2 for a reject without a reason or a decision without --as', async () => {
    for (const args of [
      ['approvals', 'reject', 'apr_x', '--as', 'alice'],
      ['approvals', 'approve', 'apr_x'],
      ['approvals', 'maybe'],
    ]) {
      const { io, lines } = capture();
      expect(await runCli(args, io)).toBe(2);
      expect(lines.err.join('\n')).toContain('Usage:');
    }
  });
});

describe.runIf(postgresUrl)('veridex approvals on PostgreSQL', () => {
  it('lists a pending request, rejects it with a reason, and refuses a second decision', async () => {
    const url = new URL(postgresUrl!);
    url.searchParams.set('schema', uniqueSchema());
    const db = await createDatabase({ url: url.toString() });
    try {
      await migrate(db);
      const proposal = buildToolProposal({
        tool: transfer,
        arguments: { amount: '10.00' },
        threadId: 't-cli',
        runId: 'r',
        toolCallId: 'c1',
        proposer: 'bot',
      });
      const request = await new ApprovalManager({ db }).request(proposal, escalate);
      const list = capture();
      expect(await runCli(['approvals', 'list', '--database-url', url.toString()], list.io)).toBe(
        0,
      );
      expect(list.lines.out.join('\n')).toContain(request.id);
      expect(list.lines.out.join('\n')).toContain('transfer {"amount":"10.00"}');

      const reject = capture();
      expect(
        await runCli(
          [
            'approvals',
            'reject',
            request.id,
            '--as',
            'alice',
            '--reason',
            'unknown vendor',
            '--database-url',
            url.toString(),
          ],
          reject.io,
        ),
      ).toBe(0);
      expect(reject.lines.out[0]).toContain('rejected');
      expect((await new ApprovalManager({ db }).require(request.id)).decisions[0]).toMatchObject({
        approver: 'alice',
        decision: 'reject',
        reason: 'unknown vendor',
      });

      const again = capture();
      expect(
        await runCli(
          ['approvals', 'approve', request.id, '--as', 'bob', '--database-url', url.toString()],
          again.io,
        ),
      ).toBe(1);
      expect(again.lines.err.join('\n')).toContain('approval_already_decided');
    } finally {
      await db.query(`DROP SCHEMA IF EXISTS "${db.schema}" CASCADE`);
      await db.close();
    }
  });
});
