import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditLog, Ed25519Signer, readPrivateKey, sealEvidence } from '../../src/audit/index.js';
import { runVeridex } from '../support/run-cli.js';

describe('veridex keys generate / veridex verify (real process)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'veridex-cli-'));
  const keysDir = join(dir, 'keys');
  const bundlePath = join(dir, 'bundle.json');
  const publicKeyPath = join(keysDir, 'evidence-ed25519.pub');

  beforeAll(async () => {
    const generated = await runVeridex(['keys', 'generate', '--out', keysDir]);
    expect(generated.code).toBe(0);
    const signer = new Ed25519Signer(readPrivateKey(join(keysDir, 'evidence-ed25519.key')));
    const audit = new AuditLog();
    await audit.append({ threadId: 'cli-thread', type: 'run_started', payload: { prompt: 'pay' } });
    await audit.append({ threadId: 'cli-thread', type: 'run_completed', payload: {} });
    const bundle = sealEvidence(
      { threadId: 'cli-thread', events: await audit.events('cli-thread') },
      [signer],
    );
    writeFileSync(bundlePath, JSON.stringify(bundle, null, 2));
  }, 60_000);

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('writes the private key with mode 0600', () => {
    expect(statSync(join(keysDir, 'evidence-ed25519.key')).mode & 0o777).toBe(0o600);
  });

  it('refuses to overwrite an existing key pair', async () => {
    const again = await runVeridex(['keys', 'generate', '--out', keysDir]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('refusing to overwrite');
  });

  it('exits 0 and summarises a valid bundle', async () => {
    const result = await runVeridex(['verify', bundlePath, '--key', publicKeyPath]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^VALID/);
    expect(result.stdout).toContain('thread      cli-thread');
    expect(result.stdout).toContain('events      2');
    expect(result.stdout).toMatch(/first .* run_started/);
    expect(result.stdout).toMatch(/last .* run_completed/);
  });

  it('exits 1 for a tampered copy', async () => {
    const bundle = JSON.parse(readFileSync(bundlePath, 'utf8'));
    const body = JSON.parse(Buffer.from(bundle.payload, 'base64').toString('utf8'));
    body.events[0].payload.prompt = 'pay more';
    bundle.payload = Buffer.from(JSON.stringify(body)).toString('base64');
    const tampered = join(dir, 'tampered.json');
    writeFileSync(tampered, JSON.stringify(bundle));
    const result = await runVeridex(['verify', tampered, '--key', publicKeyPath]);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^INVALID/);
    expect(result.stdout).toContain('does not verify');
  });

  it('exits 1 for a bundle signed by another key', async () => {
    const otherKeys = join(dir, 'other');
    await runVeridex(['keys', 'generate', '--out', otherKeys]);
    const result = await runVeridex([
      'verify',
      bundlePath,
      '--key',
      join(otherKeys, 'evidence-ed25519.pub'),
    ]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('unknown key');
  });

  it('exits 2 on usage errors', async () => {
    expect((await runVeridex(['verify', bundlePath])).code).toBe(2);
    expect(
      (await runVeridex(['verify', join(dir, 'missing.json'), '--key', publicKeyPath])).code,
    ).toBe(2);
    expect((await runVeridex(['verify', bundlePath, '--key', 'zzz'])).code).toBe(2);
    expect((await runVeridex(['nonsense'])).code).toBe(2);
    // A name every object has is not a command either.
    const inherited = await runVeridex(['toString']);
    expect(inherited.code).toBe(2);
    expect(inherited.stderr).toContain('Unknown command "toString"');
    // Five real CLI processes in a row: generous for a loaded 2-core machine (~15 s each there).
  }, 240_000);
});
