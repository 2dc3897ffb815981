import { Hono } from 'hono';
import { VeridexError } from '../../errors/index.js';
import { type Approver, canonicalIdentity, recordDirectoryChange } from '../../identity/index.js';
import { requireSession } from '../authenticate.js';
import { directoryHistory, inboxEnrolmentRefusal, needsConsent } from '../enrolment-proof.js';
import { badInput } from '../http-error.js';
import type { InboxContext, InboxEnv } from '../inbox-context.js';
import { invitationLink } from '../invitations.js';
import type { Passkeys } from '../passkeys.js';
import { jsonBody } from '../request-body.js';
import { recordRefusal } from '../security-events.js';
import { approverFacts, setSessionCookie } from './auth-routes.js';

/** The role that may invite approvers from the inbox (`veridex approvers add … --role admin`). */
export const ADMIN_ROLE = 'admin';

/**
 * Passkey enrolment (by one-time invitation), passkey sign-in, the challenge of a passkey
 * decision, and invitations for admins.
 */
export function passkeyRoutes(inbox: InboxContext, passkeys: Passkeys): Hono<InboxEnv> {
  const routes = new Hono<InboxEnv>();
  const refused = async (error: unknown, route: string, approver?: string) => {
    if (
      VeridexError.is(
        error,
        'passkey_invalid',
        'challenge_invalid',
        'invitation_invalid',
        'enrolment_unproven',
      )
    ) {
      await recordRefusal(inbox, error, { route, ...(approver ? { approver } : {}) });
    }
    return error;
  };

  // A session for the approver whose passkey just checked out: its cookie, and what the page
  // needs (the CSRF token for cookie sessions).
  const signIn = async (
    c: Parameters<typeof setSessionCookie>[0],
    approver: Approver,
    keyId: string,
  ) => {
    const { token, session } = await inbox.sessions.create(approver.id, keyId, 'passkey');
    setSessionCookie(c, inbox, token, session);
    return {
      approver: approverFacts(approver),
      keyId,
      csrfToken: session.csrfToken,
      expiresAt: session.expiresAt,
    };
  };

  routes.post('/api/passkeys/register/options', async (c) => {
    const body = await jsonBody(c);
    try {
      return c.json(await passkeys.registrationOptions(body.invitation));
    } catch (error) {
      throw await refused(error, 'POST /api/passkeys/register/options');
    }
  });

  routes.post('/api/passkeys/register', async (c) => {
    const body = await jsonBody(c);
    try {
      const { approver, key } = await passkeys.register(body.invitation, body.response, body.proof);
      return c.json(await signIn(c, approver, key.keyId));
    } catch (error) {
      throw await refused(error, 'POST /api/passkeys/register');
    }
  });

  // For an approver who already holds a key: the enrolment statement to sign with one of them.
  routes.post('/api/passkeys/register/proof-challenge', async (c) => {
    const body = await jsonBody(c);
    try {
      return c.json(await passkeys.proofOptions(body.invitation, body.credentialId));
    } catch (error) {
      throw await refused(error, 'POST /api/passkeys/register/proof-challenge');
    }
  });

  routes.post('/api/passkeys/login/options', async (c) => c.json(await passkeys.loginOptions()));

  routes.post('/api/passkeys/login', async (c) => {
    const body = await jsonBody(c);
    try {
      const { approver, key } = await passkeys.login(body.response);
      return c.json(await signIn(c, approver, key.keyId));
    } catch (error) {
      throw await refused(error, 'POST /api/passkeys/login');
    }
  });

  routes.post('/api/approvals/:id/passkey-challenge', requireSession(inbox), async (c) => {
    const body = await jsonBody(c);
    const prepared = await passkeys.decisionOptions(c.get('session').approver, c.req.param('id'), {
      decision: body.decision as 'approve',
      ...(body.reason !== undefined ? { reason: body.reason as string } : {}),
      ...(body.editedArgs !== undefined
        ? { editedArgs: body.editedArgs as Record<string, unknown> }
        : {}),
    });
    return c.json(prepared);
  });

  routes.post('/api/invitations', requireSession(inbox), async (c) => {
    const session = c.get('session');
    if (!session.approver.roles.includes(ADMIN_ROLE)) {
      throw new VeridexError(
        'admin_required',
        `Only approvers with the role "${ADMIN_ROLE}" may invite.`,
      );
    }
    const body = await jsonBody(c);
    if (typeof body.approver !== 'string') throw badInput('approver must be the id to invite');
    const id = canonicalIdentity(body.approver);
    const authority = {
      via: 'session' as const,
      approver: session.approverId,
      keyId: session.keyId,
    };
    // An invitation for an existing approver adds nothing by itself: enrolling through it needs
    // that approver's own signature when they hold (or held) a key, and is refused for one who
    // never did unless this admin added them here, role-less (enrolment-proof.ts).
    // Roles are an operator's to grant (`veridex approvers add --role`): an admin who could give
    // an approver she enrols any role could give herself, through it, any tier's authority.
    if (body.roles !== undefined && !(Array.isArray(body.roles) && body.roles.length === 0)) {
      throw badInput(
        'an invitation from the inbox grants no roles; an operator grants them with `veridex approvers add --role`',
      );
    }
    const existing = await inbox.approvals.directory.get(id);
    const history = directoryHistory(inbox);
    if (existing && !(await needsConsent(inbox, existing, history))) {
      const refusal = await inboxEnrolmentRefusal(inbox, existing, session.approverId, history);
      if (refusal) throw new VeridexError('invitation_not_allowed', refusal);
    }
    if (!existing) {
      const added = await inbox.approvals.directory.add({
        id,
        ...(typeof body.displayName === 'string' ? { displayName: body.displayName } : {}),
      });
      await recordDirectoryChange(inbox.audit, {
        change: 'approver_added',
        approver: added.id,
        at: added.addedAt,
        authorisedBy: authority,
      });
    }
    const invitation = await inbox.invitations.create({ approverId: id, createdBy: authority });
    return c.json({
      approver: invitation.approverId,
      link: invitationLink(inbox.origin, invitation.token),
      expiresAt: invitation.expiresAt,
    });
  });

  return routes;
}
