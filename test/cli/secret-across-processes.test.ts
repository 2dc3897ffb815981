import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import {
  AuditLog,
  Ed25519Signer,
  PostgresAuditStore,
  sealEvidence,
} from '../../src/audit/index.js';
import { createDatabase, type Database } from '../../src/db/index.js';
import { postgresUrl, withSchemaUrl } from '../support/databases.js';
import { runVeridex } from '../support/run-cli.js';

// Registered by one process, typed by an approver into the CLI of another.
const SECRET = 'pk_live_7Hq2Xv9LmR4tW8zN3bK6yC1d';
const root = fileURLToPath(new URL('../..', import.meta.url));
const fixture = fileURLToPath(new URL('./fixtures/secret-holder.ts', import.meta.url));
const tsx = fileURLToPath(new URL('../../node_modules/tsx/dist/cli.mjs', import.meta.url));

function runHolder(env: NodeJS.ProcessEnv): Promise<{ approvalId: string; threadId: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [tsx, fixture], {
      cwd: root,
      env: { ...process.env, ...env, FIXTURE_SECRET: SECRET },
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.stderr.on('data', (chunk) => (err += chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`secret holder exited ${code}: ${err}`));
      resolve(JSON.parse(out.trim().split('\n').at(-1)!));
    });
  });
}

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** Every way the secret could show up in stored text. */
function expectNoSecret(text: string): void {
  expect(text).not.toContain(SECRET);
  expect(text).not.toContain(Buffer.from(SECRET).toString('base64').slice(0, 24));
  expect(text).not.toContain(SECRET.slice(4, 24));
}

async function scenario(
  holderEnv: NodeJS.ProcessEnv,
  cli: { cwd?: string; args: string[] },
  openDb: () => Promise<Database>,
) {
  const { approvalId, threadId } = await runHolder(holderEnv);
  const options = { ...(cli.cwd ? { cwd: cli.cwd } : {}), env: { DATABASE_URL: '' } };
  const keyDir = mkdtempSync(join(tmpdir(), 'veridex-secret-keys-'));
  dirs.push(keyDir);
  for (const args of [
    ['approvers', 'keygen', 'alice', '--out', keyDir],
    ['approvers', 'add', 'alice@corp.example', '--key', join(keyDir, 'alice.pub'), ...cli.args],
  ]) {
    const done = await runVeridex(args, options);
    expect(done.stderr).toBe('');
  }
  // The approver pastes the secret into the reason, once as is and once base64-encoded.
  const reason = `ok, rotate ${SECRET} after; b64 ${Buffer.from(`k=${SECRET}`).toString('base64')}`;
  const decided = await runVeridex(
    [
      'approvals',
      'approve',
      approvalId,
      '--key',
      join(keyDir, 'alice.key'),
      '--reason',
      reason,
      ...cli.args,
    ],
    options,
  );
  expect(decided.stderr).toBe('');
  expect(decided.code).toBe(0);

  const db = await openDb();
  try {
    const rows = await db.query<{ type: string; payload: string }>(
      'SELECT type, payload FROM veridex_audit_events WHERE thread_id = $1 ORDER BY seq',
      [threadId],
    );
    const decision = rows.rows.find((row) => row.type === 'approval_decided');
    expect(decision?.payload).toContain('[REDACTED:PAYMENT_API_KEY]');
    expectNoSecret(rows.rows.map((row) => row.payload).join('\n'));

    // The approvals table keeps the decision's reason too: the CLI's first act was to decide,
    // so it must have loaded the shared fingerprints before scrubbing what it stores.
    const stored = await db.query('SELECT * FROM veridex_approvals WHERE id = $1', [approvalId]);
    expect(stored.rows).toHaveLength(1);
    const row = JSON.stringify(stored.rows[0]);
    expect(row).toContain('[REDACTED:PAYMENT_API_KEY]');
    expectNoSecret(row);

    const audit = new AuditLog({ store: new PostgresAuditStore(db) });
    const bundle = sealEvidence({ threadId, events: await audit.events(threadId) }, [
      new Ed25519Signer(new Uint8Array(32).fill(9)),
    ]);
    const body = Buffer.from(bundle.payload, 'base64').toString('utf8');
    expect(body).toContain('[REDACTED:PAYMENT_API_KEY]');
    expectNoSecret(body);
    expectNoSecret(JSON.stringify(bundle));
  } finally {
    await db.close();
  }
}

describe('a secret registered in one process, typed into the CLI in another', () => {
  it('never reaches the audit log or the sealed evidence (PGlite on disk)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'veridex-secret-xproc-'));
    dirs.push(dir);
    const dataDir = join(dir, '.veridex', 'db');
    await scenario(
      { FIXTURE_PGLITE_DIR: dataDir, FIXTURE_DATABASE_URL: '', DATABASE_URL: '' },
      { cwd: dir, args: [] },
      () => createDatabase({ dataDir }),
    );
  }, 300_000);

  it.runIf(postgresUrl)(
    'never reaches the audit log or the sealed evidence (PostgreSQL)',
    async () => {
      await withSchemaUrl((url) =>
        scenario({ FIXTURE_DATABASE_URL: url }, { args: ['--database-url', url] }, () =>
          createDatabase({ url }),
        ),
      );
    },
    300_000,
  );
});
