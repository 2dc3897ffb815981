import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as ed from '@noble/ed25519';
import { afterAll, describe, expect, it } from 'vitest';
import {
  ed25519KeyId,
  generateKeyPair,
  privateKeyToPem,
  publicKeyToPem,
} from '../../src/audit/index.js';
import { runCli } from '../../src/cli/index.js';
import {
  DIRECTORY_KEY_ENV,
  loadDirectorySeal,
  PostgresApproverDirectory,
} from '../../src/identity/index.js';
import { testKey } from '../support/approvers.js';
import { describeEachDatabase } from '../support/databases.js';

const dir = mkdtempSync(join(tmpdir(), 'veridex-directory-seal-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const alicePublic = ed.getPublicKey(testKey('alice'));
const aliceKeyId = ed25519KeyId(alicePublic);

describe('the directory key', () => {
  it('is generated once at the configured path (0600, with its .pub) and read back on every later load', () => {
    const path = join(dir, 'generated', 'directory.key');
    const previous = process.env[DIRECTORY_KEY_ENV];
    process.env[DIRECTORY_KEY_ENV] = path;
    try {
      const first = loadDirectorySeal();
      const second = loadDirectorySeal();
      expect(second.keyId).toBe(first.keyId);
      expect(statSync(path).mode & 0o777).toBe(0o600);
      expect(readFileSync(join(dir, 'generated', 'directory.pub'), 'utf8')).toContain(
        'BEGIN PUBLIC KEY',
      );
    } finally {
      if (previous === undefined) delete process.env[DIRECTORY_KEY_ENV];
      else process.env[DIRECTORY_KEY_ENV] = previous;
    }
  });

  it('refuses a key file others may read, and a configuration naming both halves', () => {
    const path = join(dir, 'loose.key');
    writeFileSync(path, privateKeyToPem(generateKeyPair().privateKey), { mode: 0o644 });
    expect(() => loadDirectorySeal({ sealKey: path })).toThrow(
      expect.objectContaining({ code: 'signer_key_invalid' }),
    );
    const pair = generateKeyPair();
    expect(() => loadDirectorySeal({ sealKey: pair.privateKey, trustKey: pair.publicKey })).toThrow(
      expect.objectContaining({ code: 'config_invalid' }),
    );
  });
});

describeEachDatabase('a sealed approver directory', (context) => {
  it('reads with the public half only, and refuses to change the directory with it', async () => {
    const db = context.db();
    const pair = generateKeyPair();
    const writer = new PostgresApproverDirectory(db, { sealKey: pair.privateKey });
    await writer.add({ id: 'alice', roles: ['treasury'], publicKeys: [alicePublic] });
    const reader = new PostgresApproverDirectory(db, { trustKey: publicKeyToPem(pair.publicKey) });
    expect((await reader.findByKey(aliceKeyId))?.approver.roles).toEqual(['treasury']);
    await expect(reader.add({ id: 'bob' })).rejects.toMatchObject({ code: 'directory_read_only' });
    await expect(reader.revoke('alice')).rejects.toMatchObject({ code: 'directory_read_only' });
  });

  it('seals a revocation: the revoked key reads back revoked, and a role edit hides the approver', async () => {
    const db = context.db();
    const directory = new PostgresApproverDirectory(db, { sealKey: generateKeyPair().privateKey });
    await directory.add({ id: 'alice', publicKeys: [alicePublic] });
    await directory.revoke('alice', { keyId: aliceKeyId });
    expect((await directory.findByKey(aliceKeyId))?.key.revokedAt).toBeDefined();
    await db.query(`UPDATE veridex_approvers SET display_name = 'Chief Financial Officer'`);
    expect(await directory.get('alice')).toBeUndefined();
    expect(await directory.unsealed()).toEqual([{ approver: 'alice' }]);
  });

  it('a key row an operator vouches for counts again; rows nobody sealed are named by `approvers list`', async () => {
    const db = context.db();
    const keyPath = join(dir, `directory-${context.backend}.key`);
    const pair = generateKeyPair();
    writeFileSync(keyPath, privateKeyToPem(pair.privateKey), { mode: 0o600 });
    const directory = new PostgresApproverDirectory(db, { sealKey: keyPath });
    await directory.add({ id: 'alice' });
    // A row from before seals (or written with psql).
    await db.query(
      `INSERT INTO veridex_approver_keys (key_id, approver_id, type, public_key, added_at)
       VALUES ($1, 'alice', 'ed25519', $2, now())`,
      [aliceKeyId, Buffer.from(alicePublic).toString('base64')],
    );
    expect(await directory.findByKey(aliceKeyId)).toBeUndefined();
    if (context.backend === 'postgres') {
      // The CLI against the same schema: list warns, seal vouches.
      const url = new URL(process.env.DATABASE_URL!);
      url.searchParams.set('schema', db.schema);
      const errors: string[] = [];
      const io = { out: () => {}, err: (line = '') => errors.push(line) };
      const base = ['--database-url', url.toString(), '--directory-key', keyPath];
      expect(await runCli(['approvers', 'list', ...base], io)).toBe(0);
      expect(errors.join('\n')).toContain(`UNSEALED (ignored): key ${aliceKeyId} of alice`);
      expect(await runCli(['approvers', 'seal', 'alice', '--key', aliceKeyId, ...base], io)).toBe(
        0,
      );
    } else {
      await directory.vouch('alice', { keyId: aliceKeyId });
    }
    expect((await directory.findByKey(aliceKeyId))?.approver.id).toBe('alice');
    expect(await directory.unsealed()).toEqual([]);
  });
});
