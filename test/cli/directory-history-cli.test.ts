// An admin with the CLI revokes bob's key and adds one she holds, then approves as "bob": the
// directory lets her (she operates it), but not invisibly — `veridex verify --approvers` lists
// both changes, by her, next to the decision, and a rewritten history does not verify.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as ed from '@noble/ed25519';
import { afterAll, describe, expect, it } from 'vitest';
import { ApprovalManager } from '../../src/approvals/index.js';
import {
  AuditLog,
  Ed25519Signer,
  ed25519KeyId,
  generateKeyPair,
  PostgresAuditStore,
  publicKeyToPem,
  sealEvidence,
} from '../../src/audit/index.js';
import { runCli } from '../../src/cli/index.js';
import { createDatabase, migrate } from '../../src/db/index.js';
import { PostgresApproverDirectory, signDecision } from '../../src/identity/index.js';
import { testKey } from '../support/approvers.js';
import { postgresUrl, uniqueSchema } from '../support/databases.js';
import { escalate, transferProposal } from '../support/proposals.js';

const dir = mkdtempSync(join(tmpdir(), 'veridex-directory-history-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.runIf(postgresUrl)('directory changes in veridex verify --approvers', () => {
  it('shows a revoke-then-re-add of someone else’s key, by whom, beside the decision it enabled', async () => {
    const url = new URL(postgresUrl!);
    url.searchParams.set('schema', uniqueSchema());
    const database = url.toString();
    const db = await createDatabase({ url: database });
    await migrate(db);
    const lines: string[] = [];
    const io = { out: (line = '') => lines.push(line), err: (line = '') => lines.push(line) };
    const cli = async (...argv: string[]) => {
      lines.length = 0;
      const code = await runCli([...argv, '--database-url', database], io);
      expect(code, lines.join('\n')).toBe(0);
    };
    try {
      const bobPublic = ed.getPublicKey(testKey('bob'));
      const bobKeyId = ed25519KeyId(bobPublic);
      const planted = generateKeyPair();
      const plantedKeyId = ed25519KeyId(planted.publicKey);
      writeFileSync(join(dir, 'bob.pub'), publicKeyToPem(bobPublic));
      writeFileSync(join(dir, 'planted.pub'), publicKeyToPem(planted.publicKey));

      await cli('approvers', 'add', 'bob', '--key', join(dir, 'bob.pub'), '--operator', 'root');
      await cli('approvers', 'revoke', 'bob', '--key', bobKeyId, '--operator', 'alice');
      await cli(
        'approvers',
        'add-key',
        'bob',
        '--key',
        join(dir, 'planted.pub'),
        '--operator',
        'alice',
      );

      // "bob" approves with the planted key.
      const audit = new AuditLog({ store: new PostgresAuditStore(db) });
      const manager = new ApprovalManager({
        db,
        audit,
        approvers: new PostgresApproverDirectory(db),
      });
      const request = await manager.request(
        transferProposal('th-planted'),
        escalate('human_required'),
      );
      await manager.decide(
        request.id,
        signDecision({ request, decision: 'approve', approver: 'bob' }, planted.privateKey),
      );
      const agent = new Ed25519Signer(generateKeyPair().privateKey);
      writeFileSync(join(dir, 'agent.pub'), publicKeyToPem(agent.publicKey));
      const bundle = join(dir, 'bundle.json');
      const events = await audit.events('th-planted');
      writeFileSync(
        bundle,
        JSON.stringify(sealEvidence({ threadId: 'th-planted', events }, [agent])),
      );
      const exported = join(dir, 'approvers.json');
      await cli('approvers', 'export', '--out', exported);

      lines.length = 0;
      const verify = (approvers: string) =>
        runCli(['verify', bundle, '--key', join(dir, 'agent.pub'), '--approvers', approvers], io);
      expect(await verify(exported), lines.join('\n')).toBe(0);
      const text = lines.join('\n');
      expect(text).toContain(`signed ${plantedKeyId}, key trusted`);
      expect(text).toMatch(
        new RegExp(
          `directory {3}key ${plantedKeyId} added to bob at \\S+ by operator "alice" \\(stated identity`,
        ),
      );
      // The key bob really held signed nothing here; its revocation is listed all the same,
      // as a change of the approver holding the decision key.
      expect(text).toMatch(
        new RegExp(`directory {3}key ${bobKeyId} of bob revoked at \\S+ by operator "alice"`),
      );
      expect(text).toContain('approver bob added at');
      expect(text).not.toContain('no recorded directory change adds it');

      // Rewriting who did it in the exported history breaks its hash chain.
      const forged = join(dir, 'forged.json');
      writeFileSync(forged, readFileSync(exported, 'utf8').replaceAll('"alice"', '"bob"'));
      lines.length = 0;
      expect(await verify(forged)).toBe(1);
      expect(lines.join('\n')).toContain('approvers file: directory change chain is broken');
    } finally {
      await db.close();
    }
  });
});
