import { randomBytes } from 'node:crypto';
import { afterEach, expect, it } from 'vitest';
import {
  type DecisionStatement,
  decisionChallenge,
  type SignedDecision,
  webauthnKeyId,
} from '../../src/identity/index.js';
import { InvitationStore } from '../../src/server/index.js';
import { describeEachDatabase } from '../support/databases.js';
import { startTestInbox, type TestInbox } from '../support/inbox.js';
import { escalate, transferProposal } from '../support/proposals.js';
import { verifyResealed } from '../support/resealed-bundle.js';
import { SoftAuthenticator } from '../support/soft-authenticator.js';

/**
 * Adversary: a caller of the resume/decision API (a resume payload, `ApprovalManager.decide`)
 * who also runs a web page on another origin of the inbox's relying party — another port of
 * the same host (the default rpId is the inbox origin's host name, and WebAuthn scopes a passkey
 * to the host, not the port or scheme), e.g. a dev server on http://localhost:3000 next to the
 * inbox on http://localhost:8787. No key, no session, no database access.
 *
 * Guarantee under attack (README "What a passkey signs" / "What approvers see is what they
 * sign"): a passkey decision is an assertion the inbox page obtained after showing the request
 * and checking the statement; "the service … verifies origin, relying party, user verification
 * and the signature counter"; the `ApprovalManager` then checks the signature again.
 *
 * Steps: the page asks the approver's authenticator for an assertion (the prompt names only the
 * relying party, `localhost`) over `decisionChallenge(statement)` for a statement the page built
 * itself: approve approval X (id and proposal hash are in every interrupt and webhook),
 * approver pat, fresh nonce. It sends { statement, keyId, signature, webauthn } to
 * `ApprovalManager.decide` (any resume channel). The manager's check (`signatureProblem` →
 * `checkWebAuthnAssertion`) verifies rpId hash, flags and signature but never the origin the
 * browser reported (http://localhost:3000), nor that the inbox issued the challenge, so the
 * decision counts and the transfer is approved; `verifyEvidence` counts it too (it only lists
 * the origin): the second test checks the evidence of that thread.
 *
 * Severity: medium (needs a page on a same-host origin and one passkey prompt the approver
 * accepts; then the approver approved a request they were never shown).
 *
 * Suggested fix (mechanism): seal the origin a passkey was enrolled on with the key (or give the
 * manager and the verifier the inbox origin), and have `signatureProblem` and the offline
 * `checkWebAuthnAssertion` refuse an assertion whose clientData.origin is not that origin (and
 * any `crossOrigin: true` / `topOrigin`); or accept passkey decisions only through the inbox
 * route, which consumes a challenge the service issued for the statement.
 */
describeEachDatabase(
  'a same-host page that gets a passkey assertion over a statement it built',
  (context) => {
    let inbox: TestInbox | undefined;
    afterEach(async () => {
      await inbox?.close();
      inbox = undefined;
    });

    /** Pat enrols her passkey on the inbox page (its origin), as the README describes. */
    async function enrolPat(): Promise<SoftAuthenticator> {
      inbox = await startTestInbox(context.db());
      const device = new SoftAuthenticator(inbox.server.origin);
      // `veridex approvers invite pat`: an operator invitation, so pat's passkey has no sponsor.
      await inbox.directory.add({ id: 'pat', displayName: 'Pat' });
      const invitation = await new InvitationStore(context.db(), {
        seal: inbox.directory.seal,
      }).create({ approverId: 'pat', createdBy: { via: 'operator', operator: 'ops-lead' } });
      const post = (path: string, body: unknown) =>
        inbox!.call(path, { method: 'POST', body: JSON.stringify(body) });
      const options = await (
        await post('/api/passkeys/register/options', { invitation: invitation.token })
      ).json();
      const registered = await post('/api/passkeys/register', {
        invitation: invitation.token,
        response: device.register(options),
      });
      expect(registered.status, await registered.clone().text()).toBe(200);
      return device;
    }

    function phishedDecision(
      device: SoftAuthenticator,
      request: { id: string; proposalHash: string },
      origin: string,
    ): SignedDecision {
      const statement: DecisionStatement = {
        approvalId: request.id,
        proposalHash: request.proposalHash,
        decision: 'approve',
        approver: 'pat',
        decidedAt: new Date().toISOString(),
        nonce: randomBytes(16).toString('base64url'),
      };
      const credentialId = device.credentials[0]!.id;
      const assertion = device.assert(
        { challenge: decisionChallenge(statement), allowCredentials: [{ id: credentialId }] },
        { origin },
      );
      return {
        statement,
        keyId: webauthnKeyId(credentialId),
        signature: assertion.response.signature,
        webauthn: {
          authenticatorData: assertion.response.authenticatorData,
          clientDataJSON: assertion.response.clientDataJSON,
        },
      };
    }

    it("an assertion pat's authenticator made on http://localhost:3000 does not approve a transfer through ApprovalManager.decide", async () => {
      const device = await enrolPat();
      expect(new URL(inbox!.server.origin).hostname).toBe('localhost');
      const proposal = transferProposal('th-phished-passkey');
      const decision = escalate('human_required');
      const request = await inbox!.manager.request(proposal, decision);
      const signed = phishedDecision(device, request, 'http://localhost:3000');
      const outcome = await inbox!.manager.decide(request.id, signed).then(
        (decided) => decided.status,
        (error: { code?: string }) => error.code,
      );
      expect(outcome).not.toBe('approved');
      const proof = await inbox!.manager.prove(
        await inbox!.manager.require(request.id),
        proposal,
        decision,
      );
      expect(proof.proven).toBe(false);
    });

    it('the evidence holding that off-origin passkey decision does not verify', async () => {
      const device = await enrolPat();
      const threadId = 'th-phished-passkey-evidence';
      const request = await inbox!.manager.request(
        transferProposal(threadId),
        escalate('human_required'),
      );
      const signed = phishedDecision(device, request, 'http://localhost:3000');
      await inbox!.manager.decide(request.id, signed).catch(() => undefined);
      const pat = (await inbox!.directory.get('pat'))!;
      const result = verifyResealed(threadId, await inbox!.audit.events(threadId), [
        { id: pat.id, keys: pat.keys.map((key) => ({ ...key })) },
      ]);
      expect(result.decisions.find((check) => check.approver === 'pat')?.status).not.toBe('valid');
    });
  },
);
