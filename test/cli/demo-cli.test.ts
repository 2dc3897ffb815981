import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runVeridex } from '../support/run-cli.js';

describe('veridex demo (real process, fresh directory, no server, no keys)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'veridex-demo-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const env = { DATABASE_URL: '', OPENAI_API_KEY: '' };

  it('runs the treasury scenario twice in a row, and the CLI verifies its evidence', async () => {
    for (let round = 0; round < 2; round++) {
      const result = await runVeridex(['demo'], { cwd: dir, env, timeoutMs: 120_000 });
      expect(result.code, result.stderr + result.stdout).toBe(0);
      expect(result.stdout).toContain('refused (proposer_cannot_approve)');
      expect(result.stdout).toContain('refused (approver_duplicate)');
      expect(result.stdout).toContain(
        "a forged decision (bob@ops.example's name, alice@ops.example's key) is refused (decision_key_unknown)",
      );
      expect(result.stdout).toMatch(/Receipt 0x[0-9a-f]{64}\./);
      expect(result.stdout.includes('State persists in ./.veridex')).toBe(round === 1);
      expect(result.stdout).toContain('executed the transfer exactly once');
      expect(result.stdout).toContain('denied before any approval');
      expect(result.stdout).toContain('Demo complete');
    }
    const bundles = readdirSync(join(dir, '.veridex', 'evidence'));
    expect(bundles).toHaveLength(2);
    const bundle = join(dir, '.veridex', 'evidence', bundles[0]!);
    const key = join(dir, '.veridex', 'keys', 'evidence-ed25519.pub');
    const approvers = join(dir, '.veridex', 'approvers.json');
    const valid = await runVeridex(['verify', bundle, '--key', key, '--approvers', approvers], {
      cwd: dir,
    });
    expect(valid.code).toBe(0);
    expect(valid.stdout).toMatch(/^VALID/);
    // Who approved the payment, from the bundle alone.
    for (const who of ['alice@ops.example (Alice (treasury))', 'bob@ops.example (Bob (finance))']) {
      expect(valid.stdout).toMatch(
        new RegExp(
          `decision {4}approve transfer apr_\\w+ by ${who.replace(/[()]/g, '\\$&')}: signed ed25519:[0-9a-f]{16}, key trusted`,
        ),
      );
    }

    const tampered = JSON.parse(readFileSync(bundle, 'utf8'));
    const body = JSON.parse(Buffer.from(tampered.payload, 'base64').toString('utf8'));
    const transfer = body.events.find(
      (event: { type: string }) => event.type === 'transfer_executed',
    );
    transfer.payload.to = '0x0000000000000000000000000000000000000bad';
    tampered.payload = Buffer.from(JSON.stringify(body)).toString('base64');
    writeFileSync(join(dir, 'tampered.json'), JSON.stringify(tampered));
    const invalid = await runVeridex(['verify', join(dir, 'tampered.json'), '--key', key], {
      cwd: dir,
    });
    expect(invalid.code).toBe(1);
    expect(invalid.stdout).toMatch(/^INVALID/);
  }, 240_000);
});
