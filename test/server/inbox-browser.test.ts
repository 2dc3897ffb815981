// The approvals inbox in real headless Chromium with CDP virtual authenticators: alice and bob
// enrol passkeys from one-time links, see the demo's $50,000 transfer, approve it from two
// browser contexts, the graph completes, and the evidence proves both passkey approvals.
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ed25519Verifier, verifyEvidence } from '../../src/audit/index.js';
import { loadDirectorySeal, parseApprovers, serializeApprovers } from '../../src/identity/index.js';
import { InvitationStore, invitationLink, startApprovalsServer } from '../../src/server/index.js';
import { describeEachDatabase, postgresUrl } from '../support/databases.js';
import { treasuryAgent } from '../support/treasury-agent.js';

const CHROMIUM = '/usr/bin/chromium';
const inCi = process.env.CI === 'true' || process.env.CI === '1';
// The README's screenshots are refreshed with VERIDEX_UPDATE_SCREENSHOTS=1; otherwise they go
// to a temporary directory (still taken: rendering the page is part of the test).
const SHOTS = process.env.VERIDEX_UPDATE_SCREENSHOTS
  ? fileURLToPath(new URL('../../docs/', import.meta.url))
  : mkdtempSync(join(tmpdir(), 'veridex-inbox-shots-'));

/** Adds a CTAP2 platform authenticator with user verification to the page (CDP WebAuthn domain). */
async function virtualAuthenticator(context: BrowserContext, page: Page): Promise<void> {
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
}

const suite = existsSync(CHROMIUM) || inCi ? describe : describe.skip;

suite('approvals inbox in Chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        // Passkeys need a host name (not an IP); make sure localhost is the loopback we listen on.
        '--host-resolver-rules=MAP localhost 127.0.0.1',
      ],
    });
  });
  afterAll(async () => {
    await browser?.close();
  });

  describeEachDatabase(
    'two approvers approve the demo payment with passkeys',
    (context) => {
      it('enrols alice and bob, both approve from their browsers, the payment runs once, the evidence verifies', {
        timeout: 300_000,
      }, async () => {
        const db = context.db();
        const { agent, approvals, rail, signer } = await treasuryAgent(db);
        const server = await startApprovalsServer({ db, port: 0, approvals, pollIntervalMs: 200 });
        try {
          const invitations = new InvitationStore(db, { seal: loadDirectorySeal() });
          const links: Record<string, string> = {};
          for (const [id, name] of [
            ['alice@ops.example', 'Alice (treasury)'],
            ['bob@ops.example', 'Bob (finance)'],
          ] as const) {
            await approvals.directory.add({ id, displayName: name });
            const invitation = await invitations.create({
              approverId: id,
              createdBy: { via: 'operator', operator: 'test admin' },
            });
            links[id] = invitationLink(server.origin, invitation.token);
          }

          const first = await agent.run(
            `Pay $50,000 USD to Acme Suppliers (${'0x90F8bf9A1C437435f3065A5A90310243E197c3b2'}) for invoice INV-1234.`,
          );
          expect(first.status).toBe('suspended');
          const pending = first.pendingApprovals[0]!;
          expect(pending.route).toBe('dual_approval');

          const approveAs = async (id: string, expected: RegExp, screenshots: boolean) => {
            const browserContext = await browser.newContext({
              viewport: { width: 1100, height: 900 },
            });
            const page = await browserContext.newPage();
            await virtualAuthenticator(browserContext, page);
            await page.goto(links[id]!);
            await page.getByRole('button', { name: 'Create passkey' }).click();
            await page.getByTestId('signed-in-as').waitFor();
            expect(await page.getByTestId('signed-in-as').textContent()).toContain(id);

            // Signed out, then back in with the passkey alone.
            await browserContext.clearCookies();
            await page.reload();
            await page.getByRole('button', { name: 'Sign in with passkey' }).click();
            const card = page.getByTestId('approval-card').first();
            await card.waitFor();
            expect(await card.textContent()).toContain('50,000.00 USD');
            if (screenshots)
              await page.screenshot({
                path: join(SHOTS, 'inbox-list.png'),
                fullPage: true,
              });
            await card.click();
            await page.getByRole('button', { name: 'Approve with passkey' }).waitFor();
            // The agent's reasoning: the request it was given, from the thread's checkpoint.
            expect(await page.getByTestId('reasoning').textContent()).toContain('INV-1234');
            if (screenshots)
              await page.screenshot({
                path: join(SHOTS, 'inbox-detail.png'),
                fullPage: true,
              });
            await page
              .getByLabel('Reason (signed with your decision)')
              .fill(`${id} checked invoice INV-1234`);
            await page.getByRole('button', { name: 'Approve with passkey' }).click();
            await page.getByTestId('decision-message').filter({ hasText: expected }).waitFor();
            await browserContext.close();
          };

          await approveAs('alice@ops.example', /1 of 2, status pending/, true);
          const afterAlice = await approvals.require(pending.approvalId);
          expect(afterAlice.decisions.map((d) => d.approver)).toEqual(['alice@ops.example']);
          await approveAs('bob@ops.example', /2 of 2, status approved/, false);

          const done = await agent.resume(first.threadId);
          expect(done.status).toBe('completed');
          expect(await rail.executions()).toHaveLength(1);

          const trusted = parseApprovers(serializeApprovers(await approvals.directory.list()));
          const verification = verifyEvidence(done.evidenceBundle, {
            keys: [new Ed25519Verifier(signer.publicKey)],
            approvers: trusted,
          });
          expect(verification.valid, verification.reasons.join('; ')).toBe(true);
          const passkeyApprovals = verification.decisions.filter(
            (check) => check.decision === 'approve' && check.status === 'valid' && check.keyTrusted,
          );
          expect(
            passkeyApprovals.map((check) => [check.approver, check.method, check.origin]),
          ).toEqual([
            ['alice@ops.example', 'webauthn', server.origin],
            ['bob@ops.example', 'webauthn', server.origin],
          ]);
        } finally {
          await server.close();
        }
      });
    },
    { backends: [postgresUrl ? 'postgres' : 'pglite'] },
  );
});
