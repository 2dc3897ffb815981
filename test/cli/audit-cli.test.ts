import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  AuditLog,
  canonicalJson,
  FileHeadWitness,
  GENESIS_HASH,
  generateKeyPair,
  hashTraceEvent,
  loadOrCreateSigner,
  PostgresAuditStore,
  publicKeyToPem,
  readHeadFile,
  sealAuditThread,
  sealEvidence,
  TransparencyLog,
} from '../../src/audit/index.js';
import { runCli } from '../../src/cli/index.js';
import { createDatabase, type Database, migrate } from '../../src/db/index.js';
import { postgresUrl, uniqueSchema } from '../support/databases.js';
import { runVeridex } from '../support/run-cli.js';

function capture() {
  const lines = { out: [] as string[], err: [] as string[] };
  return {
    io: { out: (line = '') => lines.out.push(line), err: (line = '') => lines.err.push(line) },
    lines,
    text: () => [...lines.out, ...lines.err].join('\n'),
  };
}

const dir = mkdtempSync(join(tmpdir(), 'veridex-audit-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const { signer, publicKeyPath } = loadOrCreateSigner(join(dir, 'keys'));

async function appendRun(audit: AuditLog, threadId: string): Promise<void> {
  await audit.append({ threadId, type: 'run_started', payload: { agent: 'payout-bot' } });
  await audit.append({
    threadId,
    type: 'approval_decided',
    payload: { approvalId: 'apr_1', approver: 'alice@ops.example', decision: 'approve' },
  });
  await audit.append({ threadId, type: 'run_completed', payload: {} });
}

/** The insider: change the approver, recompute the chain, write the rows back. */
async function rewriteApprover(db: Database, threadId: string): Promise<void> {
  const events = await new PostgresAuditStore(db).list(threadId);
  let previousEventHash = GENESIS_HASH;
  await db.transaction(async (tx) => {
    for (const [index, event] of events.entries()) {
      const payload =
        event.type === 'approval_decided'
          ? { ...event.payload, approver: 'cfo@corp' }
          : event.payload;
      const linked = { ...event, payload, previousEventHash };
      previousEventHash = hashTraceEvent(linked);
      await tx.query(
        'UPDATE veridex_audit_events SET payload = $3, previous_hash = $4, hash = $5 WHERE thread_id = $1 AND seq = $2',
        [threadId, index + 1, canonicalJson(payload), linked.previousEventHash, previousEventHash],
      );
    }
    await tx.query('UPDATE veridex_audit_heads SET hash = $2 WHERE thread_id = $1', [
      threadId,
      previousEventHash,
    ]);
  });
}

describe('veridex verify --since', () => {
  it('exits 0 for an honest extension and 1 for a rewritten history, naming the first changed event', async () => {
    const audit = new AuditLog();
    const threadId = `t-${randomUUID()}`;
    await appendRun(audit, threadId);
    const older = await sealAuditThread(audit, { threadId }, [signer]);
    await audit.append({ threadId, type: 'run_started', payload: { agent: 'payout-bot' } });
    const newer = await sealAuditThread(audit, { threadId }, [signer]);
    const olderPath = join(dir, 'older.json');
    const newerPath = join(dir, 'newer.json');
    const headPath = join(dir, 'older-head.json');
    writeFileSync(olderPath, JSON.stringify(older.bundle));
    writeFileSync(newerPath, JSON.stringify(newer.bundle));
    writeFileSync(headPath, JSON.stringify(older.treeHead));

    const ok = capture();
    expect(
      await runCli(
        ['verify', newerPath, '--key', publicKeyPath, '--since', olderPath, '--since', headPath],
        ok.io,
      ),
    ).toBe(0);
    expect(ok.text()).toMatch(/^VALID/);
    expect(ok.text()).toMatch(/previous {4}head at 3 events .*: extended consistently/);
    expect(ok.text()).toMatch(
      /since {7}.*older\.json: bundle at 3 events .*: consistent \(proof of \d+ hashes\)/,
    );
    expect(ok.text()).toMatch(/since {7}.*older-head\.json: head at 3 events/);

    // The insider re-seals a history where alice became cfo@corp.
    const events = (await audit.events(threadId)).map((event) =>
      event.type === 'approval_decided'
        ? { ...event, payload: { ...event.payload, approver: 'cfo@corp' } }
        : event,
    );
    let previousEventHash = GENESIS_HASH;
    const rechained = events.map((event) => {
      const linked = { ...event, previousEventHash };
      previousEventHash = hashTraceEvent(linked);
      return { ...linked, hash: previousEventHash };
    });
    const forgedPath = join(dir, 'forged.json');
    writeFileSync(
      forgedPath,
      JSON.stringify(sealEvidence({ threadId, events: rechained }, [signer])),
    );
    const alone = capture();
    expect(await runCli(['verify', forgedPath, '--key', publicKeyPath], alone.io)).toBe(0);
    const caught = capture();
    expect(
      await runCli(['verify', forgedPath, '--key', publicKeyPath, '--since', olderPath], caught.io),
    ).toBe(1);
    expect(caught.text()).toMatch(/^INVALID/);
    expect(caught.text()).toMatch(
      /INCONSISTENT: .*its event 1 \(approval_decided [\w-]+\) was rewritten/,
    );
    const json = capture();
    expect(
      await runCli(
        ['verify', forgedPath, '--key', publicKeyPath, '--since', olderPath, '--json'],
        json.io,
      ),
    ).toBe(1);
    expect(JSON.parse(json.lines.out.join('\n'))).toMatchObject({
      valid: false,
      since: [{ valid: false, check: { kind: 'bundle', treeSize: 3, consistent: false } }],
    });
  });

  it('reads a witness head file and keeps the heads of the bundle’s thread', async () => {
    const file = join(dir, `${randomUUID()}.jsonl`);
    const audit = new AuditLog({ witnesses: [new FileHeadWitness(file)] });
    const threadId = `t-${randomUUID()}`;
    await appendRun(audit, threadId);
    await sealAuditThread(audit, { threadId }, [signer]);
    await new TransparencyLog({ audit, signers: [signer] }).publish();
    await audit.append({ threadId, type: 'run_started', payload: {} });
    const { bundle } = await sealAuditThread(audit, { threadId }, [signer]);
    const bundlePath = join(dir, 'from-file.json');
    writeFileSync(bundlePath, JSON.stringify(bundle));
    expect(readHeadFile(file).length).toBe(3); // thread head, global head, thread head
    const out = capture();
    expect(
      await runCli(['verify', bundlePath, '--key', publicKeyPath, '--since', file], out.io),
    ).toBe(0);
    expect(out.lines.out.filter((line) => line.includes('since'))).toHaveLength(2);
    const stranger = join(dir, 'stranger.pem');
    writeFileSync(stranger, publicKeyToPem(generateKeyPair().publicKey));
    const untrusted = capture();
    expect(
      await runCli(['verify', bundlePath, '--key', stranger, '--since', file], untrusted.io),
    ).toBe(1);
  });

  it('exits 2 for a --since file that cannot be read', async () => {
    const out = capture();
    const bundlePath = join(dir, 'newer.json');
    expect(
      await runCli(
        ['verify', bundlePath, '--key', publicKeyPath, '--since', join(dir, 'nope.json')],
        out.io,
      ),
    ).toBe(2);
  });
});

describe('veridex audit usage', () => {
  it('exits 2 without an action, a witness file or a key', async () => {
    for (const args of [
      ['audit'],
      ['audit', 'check'],
      ['audit', 'verify', '--key', publicKeyPath],
      ['audit', 'verify', '--witness', join(dir, 'heads.jsonl')],
      ['audit', 'verify', '--witness', join(dir, 'missing.jsonl'), '--key', publicKeyPath],
    ]) {
      const out = capture();
      expect(await runCli(args, out.io), args.join(' ')).toBe(2);
      expect(out.text()).toContain('Usage:');
    }
  });
});

describe.runIf(postgresUrl)('veridex audit on PostgreSQL', () => {
  it('publishes heads to the witness file, then catches the insider’s rewrite', async () => {
    const url = new URL(postgresUrl!);
    url.searchParams.set('schema', uniqueSchema());
    const db = await createDatabase({ url: url.toString() });
    try {
      await migrate(db);
      const audit = new AuditLog({ store: new PostgresAuditStore(db) });
      const threadId = `t-${randomUUID()}`;
      await appendRun(audit, threadId);
      const witness = join(dir, `${randomUUID()}.jsonl`);
      const dbArgs = ['--database-url', url.toString()];
      const keyArgs = ['--key-dir', join(dir, 'keys')];
      const published = capture();
      expect(
        await runCli(
          ['audit', 'publish', '--witness', witness, ...keyArgs, ...dbArgs],
          published.io,
        ),
      ).toBe(0);
      expect(published.text()).toMatch(/signed {6}thread ".*" at 3 event\(s\)/);
      expect(published.text()).toMatch(/PUBLISHED/);

      const ok = capture();
      expect(
        await runCli(
          ['audit', 'verify', '--witness', witness, '--key', publicKeyPath, ...dbArgs],
          ok.io,
        ),
      ).toBe(0);
      expect(ok.text()).toMatch(/^CONSISTENT/);

      await rewriteApprover(db, threadId);
      expect((await audit.verify(threadId)).valid).toBe(true);
      const caught = capture();
      expect(
        await runCli(
          ['audit', 'verify', '--witness', witness, '--key', publicKeyPath, ...dbArgs],
          caught.io,
        ),
      ).toBe(1);
      expect(caught.text()).toMatch(/^INCONSISTENT/);
      expect(caught.text()).toMatch(
        /first {7}.*\.jsonl:1 thread ".*" at 3 event\(s\): the log is not consistent/,
      );

      // Once the thread grows, publishing refuses to sign the rewritten history.
      await audit.append({ threadId, type: 'run_started', payload: {} });
      const again = capture();
      expect(
        await runCli(['audit', 'publish', '--witness', witness, ...keyArgs, ...dbArgs], again.io),
      ).toBe(1);
      expect(again.text()).toContain('audit_log_inconsistent');
    } finally {
      await db.close();
    }
  });
});

describe('veridex audit verify in a second process, on PGlite', () => {
  it('finds the rewrite an insider made in the data directory', async () => {
    const cwd = mkdtempSync(join(dir, 'pglite-'));
    const db = await createDatabase({ dataDir: join(cwd, '.veridex', 'db') });
    const witness = join(cwd, 'heads.jsonl');
    const threadId = `t-${randomUUID()}`;
    try {
      await migrate(db);
      const audit = new AuditLog({
        store: new PostgresAuditStore(db),
        witnesses: [new FileHeadWitness(witness)],
      });
      await appendRun(audit, threadId);
      await new TransparencyLog({ audit, signers: [signer] }).publish();
      await rewriteApprover(db, threadId);
    } finally {
      await db.close();
    }
    const result = await runVeridex(
      ['audit', 'verify', '--witness', witness, '--key', publicKeyPath],
      {
        cwd,
        timeoutMs: 120_000,
      },
    );
    expect(result.stdout).toMatch(/^INCONSISTENT/);
    expect(result.code).toBe(1);
    expect(readFileSync(witness, 'utf8').trim().split('\n')).toHaveLength(2);
  }, 180_000);
});
