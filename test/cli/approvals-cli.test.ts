import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/index.js';
import { createDatabase, migrate } from '../../src/db/index.js';
import { buildToolProposal, type PolicyDecision } from '../../src/policy/index.js';
import type { AnyGovernedTool } from '../../src/tools/index.js';
import { postgresUrl, uniqueSchema } from '../support/databases.js';
import { approvalsIn } from '../support/proposals.js';

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

const keyDir = mkdtempSync(join(tmpdir(), 'veridex-cli-keys-'));
afterAll(() => rmSync(keyDir, { recursive: true, force: true }));

describe('veridex approvals usage', () => {
  it('exits 2 for a reject without a reason, a decision without --key, or --as without --unverified', async () => {
    for (const args of [
      ['approvals', 'reject', 'apr_x', '--key', 'k.key'],
      ['approvals', 'approve', 'apr_x'],
      ['approvals', 'approve', 'apr_x', '--as', 'alice'],
      ['approvals', 'approve', 'apr_x', '--unverified'],
      ['approvals', 'approve', 'apr_x', '--unverified', '--as', 'alice', '--key', 'k.key'],
      ['approvals', 'maybe'],
      ['approvers', 'keygen'],
      ['approvers', 'keygen', '../escape'],
      ['approvers', 'add', 'alice'],
    ]) {
      const { io, lines } = capture();
      expect(await runCli(args, io)).toBe(2);
      expect(lines.err.join('\n')).toContain('Usage:');
    }
  });
});

describe('veridex approvers keygen', () => {
  it('writes a private key only its owner can read, and refuses to overwrite it', async () => {
    const out = capture();
    expect(await runCli(['approvers', 'keygen', 'carol', '--out', keyDir], out.io)).toBe(0);
    expect(statSync(join(keyDir, 'carol.key')).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(keyDir, 'carol.pub'), 'utf8')).toContain('BEGIN PUBLIC KEY');
    expect(out.lines.out[0]).toMatch(/^key id {7}ed25519:[0-9a-f]{16}$/);
    const again = capture();
    expect(await runCli(['approvers', 'keygen', 'carol', '--out', keyDir], again.io)).toBe(1);
    expect(again.lines.err.join('\n')).toContain('refusing to overwrite');
  });
});

describe.runIf(postgresUrl)('veridex approvals on PostgreSQL', () => {
  it('lists a pending request, rejects it with a signed reason, and refuses a second decision', async () => {
    const url = new URL(postgresUrl!);
    url.searchParams.set('schema', uniqueSchema());
    const db = await createDatabase({ url: url.toString() });
    try {
      await migrate(db);
      const dbArgs = ['--database-url', url.toString()];
      for (const name of ['alice', 'bob']) {
        expect(await runCli(['approvers', 'keygen', name, '--out', keyDir], capture().io)).toBe(0);
        const added = capture();
        expect(
          await runCli(
            [
              'approvers',
              'add',
              `${name}@corp.example`,
              '--key',
              join(keyDir, `${name}.pub`),
              '--name',
              name,
              ...dbArgs,
            ],
            added.io,
          ),
          added.lines.err.join('\n'),
        ).toBe(0);
      }
      // A look-alike of alice (Cyrillic а, capitals, a zero-width space) is not a second approver.
      const lookalike = capture();
      expect(
        await runCli(
          [
            'approvers',
            'add',
            'АLICE\u200b@corp.example',
            '--key',
            join(keyDir, 'bob.pub'),
            ...dbArgs,
          ],
          lookalike.io,
        ),
      ).toBe(1);
      expect(lookalike.lines.err.join('\n')).toContain('identity_ambiguous');
      const listed = capture();
      expect(await runCli(['approvers', 'list', ...dbArgs], listed.io)).toBe(0);
      expect(listed.lines.out).toHaveLength(2);
      const proposal = buildToolProposal({
        tool: transfer,
        arguments: { amount: '10.00' },
        threadId: 't-cli',
        runId: 'r',
        toolCallId: 'c1',
        proposer: 'bot',
      });
      const request = await approvalsIn(db).request(proposal, escalate);
      const list = capture();
      expect(await runCli(['approvals', 'list', '--database-url', url.toString()], list.io)).toBe(
        0,
      );
      expect(list.lines.out.join('\n')).toContain(request.id);
      expect(list.lines.out.join('\n')).toContain('transfer {"amount":"10.00"}');

      // A private key others can read is refused, like ssh does.
      chmodSync(join(keyDir, 'alice.key'), 0o644);
      const exposed = capture();
      expect(
        await runCli(
          ['approvals', 'approve', request.id, '--key', join(keyDir, 'alice.key'), ...dbArgs],
          exposed.io,
        ),
      ).toBe(1);
      expect(exposed.lines.err.join('\n')).toMatch(/signer_key_invalid.*chmod 600/);
      chmodSync(join(keyDir, 'alice.key'), 0o600);

      const reject = capture();
      expect(
        await runCli(
          [
            'approvals',
            'reject',
            request.id,
            '--key',
            join(keyDir, 'alice.key'),
            '--reason',
            'unknown vendor',
            ...dbArgs,
          ],
          reject.io,
        ),
      ).toBe(0);
      expect(reject.lines.out[0]).toContain('rejected');
      expect(reject.lines.out[0]).toContain('signed by alice@corp.example');
      const [recorded] = (await approvalsIn(db).require(request.id)).decisions;
      expect(recorded).toMatchObject({
        approver: 'alice@corp.example',
        approverName: 'alice',
        decision: 'reject',
        reason: 'unknown vendor',
        verified: true,
        signed: { statement: { approvalId: request.id, proposalHash: request.proposalHash } },
      });

      const again = capture();
      expect(
        await runCli(
          ['approvals', 'approve', request.id, '--key', join(keyDir, 'bob.key'), ...dbArgs],
          again.io,
        ),
      ).toBe(1);
      expect(again.lines.err.join('\n')).toContain('approval_already_decided');

      const exported = capture();
      expect(await runCli(['approvers', 'export', ...dbArgs], exported.io)).toBe(0);
      expect(JSON.parse(exported.lines.out.join('\n'))).toMatchObject({
        format: 'veridex.approvers/v1',
        approvers: [{ id: 'alice@corp.example' }, { id: 'bob@corp.example' }],
      });
      const revoked = capture();
      expect(await runCli(['approvers', 'revoke', 'Bob@Corp.Example', ...dbArgs], revoked.io)).toBe(
        0,
      );
      expect(revoked.lines.out[0]).toContain('REVOKED');
    } finally {
      await db.query(`DROP SCHEMA IF EXISTS "${db.schema}" CASCADE`);
      await db.close();
    }
  });
});
