import { timingSafeEqual } from 'node:crypto';
import type { Context, MiddlewareHandler } from 'hono';
import { getCookie } from 'hono/cookie';
import { VeridexError } from '../errors/index.js';
import { type Approver, isActiveKey } from '../identity/index.js';
import type { InboxContext, InboxEnv } from './inbox-context.js';
import { SESSION_COOKIE } from './inbox-context.js';
import type { Session } from './session-store.js';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Refuses requests whose `Host` is not the inbox's own: a page on another site that rebinds its
 * DNS name to 127.0.0.1 reaches the port, but with its own host name.
 */
export function hostCheck(inbox: InboxContext): MiddlewareHandler {
  return async (c, next) => {
    const host = c.req.header('host');
    if (!host || !inbox.allowedHosts.has(host.toLowerCase())) {
      throw new VeridexError(
        'host_not_allowed',
        `Host "${String(host).slice(0, 100)}" is not served here; open the inbox at ${inbox.origin}.`,
      );
    }
    await next();
  };
}

/** The session token a request carries: `Authorization: Bearer` first, else the cookie. */
function tokenOf(c: Context): { token: string; via: 'cookie' | 'bearer' } | undefined {
  const header = c.req.header('authorization');
  if (header !== undefined) {
    const match = /^Bearer ([A-Za-z0-9_-]{1,200})$/.exec(header);
    return match ? { token: match[1]!, via: 'bearer' } : undefined;
  }
  const cookie = getCookie(c, SESSION_COOKIE);
  return cookie ? { token: cookie, via: 'cookie' } : undefined;
}

/**
 * The session a token opens, if it still stands: not expired or signed out, its approver still
 * in the directory and not revoked, and the key that opened it still one of theirs and not
 * revoked. Re-checked on every request and before every streamed event (README "Approvals
 * inbox", sessions), so revoking a key or an approver ends what it opened at once.
 */
export async function liveSession(
  inbox: InboxContext,
  token: string,
): Promise<{ session: Session; approver: Approver } | undefined> {
  const session = await inbox.sessions.find(token);
  if (!session) return undefined;
  const found = await inbox.approvals.directory.findByKey(session.keyId);
  if (!found || found.approver.id !== session.approverId) return undefined;
  if (!isActiveKey(found.approver, found.key)) return undefined;
  return { session, approver: found.approver };
}

/**
 * Requires a live session (`auth_required` otherwise, see {@link liveSession}). A cookie-borne
 * session must also pass CSRF on every mutating request: the `X-CSRF-Token` header must equal
 * the session's token, and an `Origin` header, when sent, must be the inbox's own. Bearer
 * tokens are not sent by browsers on their own, so they need no CSRF token.
 */
export function requireSession(inbox: InboxContext): MiddlewareHandler<InboxEnv> {
  return async (c, next) => {
    const carried = tokenOf(c);
    const live = carried ? await liveSession(inbox, carried.token) : undefined;
    if (!carried || !live) {
      throw new VeridexError(
        'auth_required',
        'Sign in first: with a passkey in the inbox, or with an approver key (POST /api/auth/key).',
      );
    }
    const { session, approver } = live;
    if (carried.via === 'cookie' && !SAFE_METHODS.has(c.req.method)) {
      const origin = c.req.header('origin');
      const csrf = c.req.header('x-csrf-token');
      if (
        (origin !== undefined && origin !== inbox.origin) ||
        !sameToken(csrf, session.csrfToken)
      ) {
        throw new VeridexError(
          'csrf_rejected',
          'This request did not come from the inbox page (missing or wrong X-CSRF-Token, or a foreign Origin).',
        );
      }
    }
    c.set('session', { ...session, approver, via: carried.via, token: carried.token });
    await next();
  };
}

function sameToken(sent: string | undefined, expected: string): boolean {
  if (sent === undefined || sent.length !== expected.length) return false;
  return timingSafeEqual(Buffer.from(sent), Buffer.from(expected));
}
