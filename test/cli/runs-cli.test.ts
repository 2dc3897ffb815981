import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HumanMessage } from '@langchain/core/messages';
import { afterEach, describe, expect, it } from 'vitest';
import { exportThread } from '../../src/adapters/index.js';
import { canonicalJson, privateKeyToPem } from '../../src/audit/index.js';
import { runCli } from '../../src/cli/index.js';
import { createDatabase, type Database, migrate } from '../../src/db/index.js';
import { PostgresApproverDirectory } from '../../src/identity/index.js';
import { resumeThread } from '../../src/nodes/index.js';
import { PAYOUT_PROMPT, treasuryRun } from '../adapters/fixtures/treasury-run.js';
import { testApproverInits, testKey } from '../support/approvers.js';
import { postgresUrl, uniqueSchema } from '../support/databases.js';

function capture() {
  const lines = { out: [] as string[], err: [] as string[] };
  return {
    io: { out: (line = '') => lines.out.push(line), err: (line = '') => lines.err.push(line) },
    lines,
  };
}

const GRAPH = 'test/adapters/fixtures/treasury-run.ts#graphFromEnvironment';
const opened: Database[] = [];

async function schemaDatabase(): Promise<{ db: Database; url: string }> {
  const url = new URL(postgresUrl!);
  url.searchParams.set('schema', uniqueSchema());
  const db = await createDatabase({ url: url.toString() });
  opened.push(db);
  await migrate(db);
  return { db, url: url.toString() };
}

afterEach(async () => {
  delete process.env.VERIDEX_RUN_FIXTURE_URL;
  for (const db of opened.splice(0)) {
    await db.query(`DROP SCHEMA IF EXISTS "${db.schema}" CASCADE`);
    await db.close();
  }
});

describe('veridex runs usage', () => {
  it('exits 2 without a thread, a file, --graph, or with a graph module that is not one', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'veridex-runs-')), 'run.json');
    writeFileSync(file, '{}');
    for (const [args, message] of [
      [['runs', 'export'], 'export needs a thread id'],
      [['runs', 'import', file], 'import needs --graph'],
      [['runs', 'import', file, '--graph', 'no/such/module.ts#graph'], 'cannot import'],
      [
        ['runs', 'import', file, '--graph', 'test/adapters/fixtures/treasury-run.ts#nope'],
        'no export "nope"',
      ],
      [
        ['runs', 'import', file, '--graph', 'test/adapters/fixtures/treasury-run.ts#PAYOUT_PROMPT'],
        'neither a compiled graph',
      ],
      [['runs', 'publish'], 'expected export or import'],
    ] as const) {
      const { io, lines } = capture();
      expect(await runCli([...args], io), args.join(' ')).toBe(2);
      expect(lines.err.join('\n')).toContain(message);
    }
  });

  it('lists runs in the command overview', async () => {
    const { io, lines } = capture();
    expect(await runCli(['--help'], io)).toBe(0);
    expect(lines.out.join('\n')).toContain('runs export|import');
  });
});

describe.runIf(postgresUrl)('veridex runs on PostgreSQL', () => {
  it('exports a suspended payout, imports it into another database, and pays once after two approvals there', async () => {
    const source = await schemaDatabase();
    const payout = await treasuryRun(source.db);
    await payout.graph.invoke(
      { messages: [new HumanMessage(PAYOUT_PROMPT)] },
      { configurable: { thread_id: 'payout' } },
    );
    const dir = mkdtempSync(join(tmpdir(), 'veridex-runs-'));
    const file = join(dir, 'run.json');
    const exported = capture();
    expect(
      await runCli(
        ['runs', 'export', 'payout', '--out', file, '--database-url', source.url],
        exported.io,
      ),
      exported.lines.err.join('\n'),
    ).toBe(0);
    expect(exported.lines.out[0]).toContain('waits on tools, 1 pending approval(s)');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    // Read straight from the database, the document is the one the graph itself exports.
    const text = readFileSync(file, 'utf8');
    expect(text).toBe(canonicalJson(await exportThread(payout.graph, 'payout')));
    const approvalId = JSON.parse(text).pending.approvals[0].id as string;

    const target = await schemaDatabase();
    process.env.VERIDEX_RUN_FIXTURE_URL = target.url;
    const imported = capture();
    expect(
      await runCli(['runs', 'import', file, '--graph', GRAPH], imported.io),
      imported.lines.err.join('\n'),
    ).toBe(0);
    expect(imported.lines.out.join('\n')).toContain(`${approvalId}: restored`);

    const again = join(dir, 'again.json');
    expect(
      await runCli(
        ['runs', 'export', 'payout', '--out', again, '--database-url', target.url],
        capture().io,
      ),
    ).toBe(0);
    expect(readFileSync(again, 'utf8')).toBe(text);

    // The approvers on the new machine: registered in its database, each with a key file.
    const directory = new PostgresApproverDirectory(target.db);
    for (const approver of ['alice@company.com', 'bob@company.com']) {
      const [init] = testApproverInits([approver]);
      await directory.add(init!);
      const keyFile = join(dir, `${approver}.key`);
      writeFileSync(keyFile, privateKeyToPem(testKey(approver)), { mode: 0o600 });
      const decided = capture();
      expect(
        await runCli(
          ['approvals', 'approve', approvalId, '--key', keyFile, '--database-url', target.url],
          decided.io,
        ),
        decided.lines.err.join('\n'),
      ).toBe(0);
    }
    const resumed = await treasuryRun(target.db);
    const done = await resumeThread(resumed.graph, 'payout');
    expect(done.messages.at(-1)?.content).toBe('Paid Acme Suppliers $50,000.');
    expect(await resumed.executions()).toBe(1);
    expect(await payout.executions()).toBe(0);

    const twice = capture();
    expect(await runCli(['runs', 'import', file, '--graph', GRAPH], twice.io)).toBe(1);
    expect(twice.lines.err.join('\n')).toContain('import_conflict');
  });
});
