import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ApprovalManager } from '../../src/approvals/index.js';
import {
  AuditLog,
  Ed25519Signer,
  generateKeyPair,
  publicKeyToPem,
  sealEvidence,
} from '../../src/audit/index.js';
import { runCli } from '../../src/cli/index.js';
import { MemoryApproverDirectory, serializeApprovers } from '../../src/identity/index.js';
import { buildToolProposal, type PolicyDecision } from '../../src/policy/index.js';
import type { AnyGovernedTool } from '../../src/tools/index.js';
import { signAs, testApproverInits } from '../support/approvers.js';

const dir = mkdtempSync(join(tmpdir(), 'veridex-verify-decisions-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const agent = new Ed25519Signer(generateKeyPair().privateKey);
const agentKey = join(dir, 'agent.pub');
writeFileSync(agentKey, publicKeyToPem(agent.publicKey));

function capture() {
  const lines = { out: [] as string[], err: [] as string[] };
  return {
    io: { out: (line = '') => lines.out.push(line), err: (line = '') => lines.err.push(line) },
    text: () => [...lines.out, ...lines.err].join('\n'),
  };
}

/** A sealed thread with one human_required approval, decided by alice. */
async function bundleWith(identity: 'signed' | 'unverified'): Promise<string> {
  const audit = new AuditLog();
  const manager = new ApprovalManager({ audit, approvers: testApproverInits(['alice']), identity });
  const request = await manager.request(
    buildToolProposal({
      tool: {
        name: 'transfer',
        schemaHash: 'a'.repeat(64),
        safetyClass: 'financial',
        trust: 'local',
      } as unknown as AnyGovernedTool,
      arguments: { amount: '10.00' },
      threadId: `t-${identity}`,
      runId: 'r',
      toolCallId: 'c',
      proposer: 'bot',
    }),
    {
      verdict: 'escalate',
      route: 'human_required',
      reason: 'x',
      ruleId: 'x',
      ruleName: 'x',
      evaluations: [],
    } as Extract<PolicyDecision, { verdict: 'escalate' }>,
  );
  await manager.decide(
    request.id,
    identity === 'signed' ? signAs(request, 'alice') : { decision: 'approve', approver: 'alice' },
  );
  const path = join(dir, `${identity}.json`);
  const events = await audit.events(`t-${identity}`);
  writeFileSync(path, JSON.stringify(sealEvidence({ threadId: `t-${identity}`, events }, [agent])));
  return path;
}

async function approversFile(name: string, inits = testApproverInits(['alice'])) {
  const path = join(dir, name);
  writeFileSync(path, serializeApprovers(await new MemoryApproverDirectory(inits).list()));
  return path;
}

describe('veridex verify --approvers', () => {
  it('names who approved, with the key, and trusts it only against the given directory', async () => {
    const bundle = await bundleWith('signed');
    const trusted = capture();
    expect(
      await runCli(
        ['verify', bundle, '--key', agentKey, '--approvers', await approversFile('ok.json')],
        trusted.io,
      ),
    ).toBe(0);
    expect(trusted.text()).toMatch(
      /decision {4}approve transfer apr_\w+ by alice \(Alice\): signed ed25519:[0-9a-f]{16}, key trusted; proposal [0-9a-f]{64}/,
    );
    const unchecked = capture();
    expect(await runCli(['verify', bundle, '--key', agentKey], unchecked.io)).toBe(0);
    expect(unchecked.text()).toContain('pass --approvers approvers.json');
    // alice's real key is not in this directory: the decision is not hers.
    const rogue = capture();
    const rogueFile = await approversFile('rogue.json', [
      { id: 'alice', publicKeys: [generateKeyPair().publicKey] },
    ]);
    expect(
      await runCli(['verify', bundle, '--key', agentKey, '--approvers', rogueFile], rogue.io),
    ).toBe(1);
    expect(rogue.text()).toMatch(/^INVALID/);
    expect(rogue.text()).toContain('is not a key of "alice" in the trusted approvers');
  });

  it('fails a bundle of the unverified development mode unless --allow-unverified accepts it', async () => {
    const bundle = await bundleWith('unverified');
    const strict = capture();
    expect(await runCli(['verify', bundle, '--key', agentKey], strict.io)).toBe(1);
    expect(strict.text()).toMatch(/^INVALID/);
    expect(strict.text()).toContain('pass --allow-unverified');
    const result = capture();
    expect(
      await runCli(['verify', bundle, '--key', agentKey, '--allow-unverified'], result.io),
    ).toBe(0);
    expect(result.text()).toContain('(accepted: --allow-unverified)');
    expect(result.text()).toContain('UNVERIFIED: bare name, development mode');
    expect(result.text()).toMatch(
      /warning {5}1 decision\(s\) were taken in the unverified development mode/,
    );
  });

  it('refuses trust files another local user could rewrite (exit 2, nothing verified)', async () => {
    const bundle = await bundleWith('signed');
    const loose = await approversFile('loose.json');
    chmodSync(loose, 0o666);
    const approvers = capture();
    expect(
      await runCli(['verify', bundle, '--key', agentKey, '--approvers', loose], approvers.io),
    ).toBe(2);
    expect(approvers.text()).toMatch(/Refusing to trust .*loose\.json: .* writable by others/);
    const looseKey = join(dir, 'loose.pub');
    writeFileSync(looseKey, publicKeyToPem(agent.publicKey));
    chmodSync(looseKey, 0o666);
    const key = capture();
    expect(await runCli(['verify', bundle, '--key', looseKey], key.io)).toBe(2);
    expect(key.text()).toMatch(/Refusing to trust .*loose\.pub/);
    // A file no one else may write, in a directory anyone may write into (and so replace it).
    const open = mkdtempSync(join(tmpdir(), 'veridex-open-dir-'));
    try {
      chmodSync(open, 0o777);
      const planted = join(open, 'approvers.json');
      writeFileSync(planted, readFileSync(await approversFile('copy.json')));
      chmodSync(planted, 0o644);
      const replaced = capture();
      expect(
        await runCli(['verify', bundle, '--key', agentKey, '--approvers', planted], replaced.io),
      ).toBe(2);
      expect(replaced.text()).toContain('could replace');
    } finally {
      rmSync(open, { recursive: true, force: true });
    }
  });

  it('exits 2 for an approvers file that is not a directory export', async () => {
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '{"approvers": "nope"}');
    const result = capture();
    expect(
      await runCli(
        ['verify', await bundleWith('signed'), '--key', agentKey, '--approvers', bad],
        result.io,
      ),
    ).toBe(2);
    expect(result.text()).toContain('Not an approver directory');
  });
});
