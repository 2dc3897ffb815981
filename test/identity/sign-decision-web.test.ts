// `@veridex/langgraph/identity/web`: a decision signed where Node's crypto is not available.
// The module is bundled for the browser (no `node:` import may be reachable), run in real
// Chromium, and what it signs is counted by the ApprovalManager like `signDecision`'s.
import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { build } from 'esbuild';
import { chromium } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { ApprovalManager } from '../../src/approvals/index.js';
import { AuditLog } from '../../src/audit/index.js';
import type { SignedDecision } from '../../src/identity/index.js';
import { signDecisionWeb } from '../../src/identity/web/index.js';
import { testApproverInits, testKey } from '../support/approvers.js';
import { escalate, transferProposal } from '../support/proposals.js';

const CHROMIUM = '/usr/bin/chromium';
const inCi = process.env.CI === 'true' || process.env.CI === '1';

async function openRequest(threadId: string) {
  const audit = new AuditLog();
  const manager = new ApprovalManager({ audit, approvers: testApproverInits(['alice', 'bob']) });
  const request = await manager.request(transferProposal(threadId), escalate('dual_approval'));
  return { manager, request };
}

async function browserBundle(): Promise<string> {
  const result = await build({
    entryPoints: [new URL('../../src/identity/web/index.ts', import.meta.url).pathname],
    bundle: true,
    platform: 'browser',
    format: 'iife',
    globalName: 'veridexWeb',
    write: false,
    logLevel: 'silent',
  });
  return result.outputFiles[0]!.text;
}

describe('signDecisionWeb', () => {
  it('bundles for the browser with no Node built-in in reach', async () => {
    const code = await browserBundle();
    expect(code).not.toMatch(/require\(["']node:|from ["']node:/);
    expect(code).toContain('signDecisionWeb');
  });

  it('signs what the approval manager counts, as signDecision does (approve, and edit with its arguments)', async () => {
    const { manager, request } = await openRequest('t-web');
    const approve = await signDecisionWeb(
      { request, decision: 'approve', approver: 'alice', reason: 'invoice matches' },
      testKey('alice'),
    );
    const after = await manager.decide(request.id, approve);
    expect(after.decisions).toMatchObject([
      { approver: 'alice', decision: 'approve', verified: true },
    ]);
    // The key id is the one the directory knows alice's key by.
    expect(after.decisions[0]?.signed?.keyId).toBe(approve.keyId);
    const edit = await signDecisionWeb(
      { request, decision: 'edit', approver: 'bob', editedArgs: { to: 'acme', amount: '10.00' } },
      testKey('bob'),
    );
    expect((await manager.decide(request.id, edit)).status).toBe('edited');
  });

  it('a decision it signs is refused once tampered with, and under another approver name', async () => {
    const { manager, request } = await openRequest('t-web-tamper');
    const signed = await signDecisionWeb(
      { request, decision: 'approve', approver: 'alice' },
      testKey('alice'),
    );
    const flipped = { ...signed, statement: { ...signed.statement, decision: 'reject' } };
    await expect(manager.decide(request.id, flipped as SignedDecision)).rejects.toMatchObject({
      code: 'decision_signature_invalid',
    });
    const asBob = await signDecisionWeb(
      { request, decision: 'approve', approver: 'bob' },
      testKey('alice'),
    );
    await expect(manager.decide(request.id, asBob)).rejects.toMatchObject({
      code: expect.stringMatching(
        /decision_key_unknown|decision_signature_invalid|decision_mismatch/,
      ),
    });
    await expect(
      signDecisionWeb({ request, decision: 'approve', approver: 'a' }, new Uint8Array(8)),
    ).rejects.toThrow(/32-byte/);
  });

  (existsSync(CHROMIUM) || inCi ? it : it.skip)(
    'runs in real Chromium: the page signs with WebCrypto, the manager counts it',
    { timeout: 120_000 },
    async () => {
      const { manager, request } = await openRequest('t-web-chromium');
      const browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'],
      });
      try {
        // A secure context (http on the loopback is one), as WebCrypto requires.
        const bundle = await browserBundle();
        const server = createServer((_request, response) => {
          response.setHeader('content-type', 'text/html');
          response.end(`<!doctype html><title>sign</title><script>${bundle}</script>`);
        });
        await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
        const page = await browser.newPage();
        await page.goto(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
        server.close();
        const signed = (await page.evaluate(
          async ({ request, seed }) => {
            const web = (
              globalThis as unknown as {
                veridexWeb: { signDecisionWeb: typeof signDecisionWeb };
              }
            ).veridexWeb;
            return web.signDecisionWeb(
              { request, decision: 'approve', approver: 'alice' },
              new Uint8Array(seed),
            );
          },
          {
            request: { id: request.id, proposalHash: request.proposalHash },
            seed: [...testKey('alice')],
          },
        )) as SignedDecision;
        const after = await manager.decide(request.id, signed);
        expect(after.decisions).toMatchObject([{ approver: 'alice', verified: true }]);
      } finally {
        await browser.close();
      }
    },
  );
});
