import { afterEach, expect, it } from 'vitest';
import { signDecision } from '../../src/identity/index.js';
import { testKey } from '../support/approvers.js';
import { describeEachDatabase } from '../support/databases.js';
import { startTestInbox, type TestInbox } from '../support/inbox.js';
import { escalate, transferProposal } from '../support/proposals.js';

/**
 * Adversary: anyone who can reach the inbox's port (no session needed for the sign-in routes),
 * or a signed-in approver, sending oversized or pathological bodies.
 *
 * Guarantee under attack (README "The API": "Errors are `{ error: { code, message } }` with the
 * library's codes"; src/server/http-error.ts: "Codes not listed are server faults (500)";
 * THREAT-MODEL "Bound every importer and parser … whatever the input does"): malformed or
 * oversized input is a client error, refused as such, never a server fault.
 *
 * Steps: (1) POST a 300 KiB JSON body to the anonymous `/api/auth/key` (or any /api route):
 * `bodyLimit` throws Hono's `HTTPException(413)`, `app.onError` hands it to `errorResponse`,
 * which knows only `VeridexError`s, and the client gets 500 `internal_error` "The server
 * failed". (2) A signed-in approver posts an `edit` decision whose `editedArgs` nest 20,000
 * arrays deep (well under the size limit) with a statement signed over any 64-hex
 * `editedArgumentsHash`: `authenticateDecision` recurses in `argumentsHash` until the stack
 * overflows, the RangeError passes `decide`'s catch (not a VeridexError), and the answer is 500
 * too. Nothing is counted and the process survives, but every such request is reported as a
 * server fault an unauthenticated client can trigger at will (alert noise, masking real
 * faults), and the security_event a refused decision should write is never written.
 *
 * Severity: low.
 *
 * Suggested fix (mechanism): in `errorResponse`, answer an `HTTPException` with its own status
 * (413 `input_too_large`); bound the depth (and size) of `editedArgs` in
 * `describeMalformedSignedDecision` (and every JSON value the API hashes or scrubs) so that a
 * too-deep value is `resume_payload_invalid` (400) before anything recurses over it.
 */
describeEachDatabase('oversized and pathological bodies sent to the inbox', (context) => {
  let inbox: TestInbox | undefined;
  afterEach(async () => {
    await inbox?.close();
    inbox = undefined;
  });

  it('a 300 KiB body to an anonymous route is answered 413, not 500', async () => {
    inbox = await startTestInbox(context.db());
    const response = await inbox.call('/api/auth/key', {
      method: 'POST',
      body: JSON.stringify({ pad: 'x'.repeat(300 * 1024) }),
    });
    expect(response.status).toBe(413);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe(
      'input_too_large',
    );
  });

  it('an edit whose editedArgs nest 20,000 levels deep is refused as input (4xx), not 500', async () => {
    inbox = await startTestInbox(context.db());
    const request = await inbox.manager.request(
      transferProposal('th-deep-edit'),
      escalate('human_required'),
    );
    const { token } = await inbox.login('bob');
    const signed = signDecision(
      { request, decision: 'edit', approver: 'bob', editedArgs: { to: 'x' } },
      testKey('bob'),
    );
    const deep = `${'['.repeat(20_000)}${']'.repeat(20_000)}`;
    const body = JSON.stringify({ ...signed, editedArgs: { to: '__DEEP__' } }).replace(
      '"__DEEP__"',
      deep,
    );
    const response = await inbox.call(`/api/approvals/${request.id}/decisions`, {
      method: 'POST',
      token,
      body,
    });
    expect(response.status).toBeGreaterThanOrEqual(400);
    expect(response.status).toBeLessThan(500);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe(
      'resume_payload_invalid',
    );
    expect((await inbox.call('/api/session', { token })).status).toBe(200);
    const refused = (await inbox.audit.events('th-deep-edit')).filter(
      (event) => event.type === 'security_event',
    );
    expect(refused.map((event) => event.payload.kind)).toContain('resume_payload_invalid');
  });
});
