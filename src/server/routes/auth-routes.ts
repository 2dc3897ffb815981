import { Hono } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { VeridexError } from '../../errors/index.js';
import type { Approver } from '../../identity/index.js';
import { requireSession } from '../authenticate.js';
import { type InboxContext, type InboxEnv, SESSION_COOKIE } from '../inbox-context.js';
import { verifyKeyLogin } from '../key-login.js';
import { jsonBody } from '../request-body.js';
import { recordRefusal } from '../security-events.js';
import type { Session } from '../session-store.js';

/** The public facts of a signed-in approver. */
export function approverFacts(approver: Approver) {
  return { id: approver.id, displayName: approver.displayName, roles: approver.roles };
}

/** Sets the HttpOnly, Secure, SameSite=Strict session cookie. */
export function setSessionCookie(
  c: Parameters<typeof setCookie>[0],
  inbox: InboxContext,
  token: string,
  session: Session,
): void {
  const maxAge = Math.max(
    1,
    Math.floor((Date.parse(session.expiresAt) - inbox.now().getTime()) / 1000),
  );
  if (inbox.secureCookies) {
    setCookie(c, SESSION_COOKIE.slice('__Host-'.length), token, {
      prefix: 'host',
      httpOnly: true,
      sameSite: 'Strict',
      maxAge,
    });
  } else {
    setCookie(c, SESSION_COOKIE, token, { path: '/', httpOnly: true, sameSite: 'Strict', maxAge });
  }
}

/**
 * Sign-in with an approver's Ed25519 key (API clients and scripts), the current session, and
 * sign-out. Passkey sign-in lives with the passkey routes.
 */
export function authRoutes(inbox: InboxContext): Hono<InboxEnv> {
  const routes = new Hono<InboxEnv>();

  routes.post('/api/auth/challenge', async (c) => {
    const issued = await inbox.challenges.issue({ purpose: 'login' });
    return c.json({
      challenge: issued.challenge,
      audience: inbox.origin,
      expiresAt: issued.expiresAt,
    });
  });

  routes.post('/api/auth/key', async (c) => {
    const body = await jsonBody(c);
    try {
      const { approver, keyId, challenge } = await verifyKeyLogin(
        body,
        inbox.approvals.directory,
        inbox.origin,
      );
      await inbox.challenges.consume(challenge, 'login');
      const { token, session } = await inbox.sessions.create(approver.id, keyId, 'ed25519');
      setSessionCookie(c, inbox, token, session);
      return c.json({
        token,
        csrfToken: session.csrfToken,
        expiresAt: session.expiresAt,
        approver: approverFacts(approver),
      });
    } catch (error) {
      if (VeridexError.is(error, 'login_invalid', 'challenge_invalid')) {
        const claimed = (body.statement as { approver?: unknown } | undefined)?.approver;
        await recordRefusal(inbox, error, {
          route: 'POST /api/auth/key',
          ...(typeof claimed === 'string' ? { approver: claimed } : {}),
        });
      }
      throw error;
    }
  });

  routes.get('/api/session', requireSession(inbox), (c) => {
    const session = c.get('session');
    return c.json({
      approver: approverFacts(session.approver),
      method: session.method,
      keyId: session.keyId,
      expiresAt: session.expiresAt,
      csrfToken: session.csrfToken,
    });
  });

  routes.post('/api/auth/logout', requireSession(inbox), async (c) => {
    const header = c.req.header('authorization');
    const token = header?.startsWith('Bearer ')
      ? header.slice('Bearer '.length)
      : getCookie(c, SESSION_COOKIE);
    if (token) await inbox.sessions.revoke(token);
    deleteCookie(c, SESSION_COOKIE, { path: '/', secure: inbox.secureCookies });
    return c.json({ signedOut: true });
  });

  return routes;
}
