import type { ApprovalManager } from '../approvals/index.js';
import type { AuditLog } from '../audit/index.js';
import type { Database } from '../db/index.js';
import type { Approver } from '../identity/index.js';
import type { ApprovalFeed } from './approval-feed.js';
import type { ChallengeStore } from './challenge-store.js';
import type { InvitationStore } from './invitations.js';
import type { Session, SessionStore } from './session-store.js';

/** Everything the service's routes share, built once by `createApprovalsApp`. */
export interface InboxContext {
  db: Database;
  approvals: ApprovalManager;
  audit: AuditLog;
  sessions: SessionStore;
  challenges: ChallengeStore;
  feed: ApprovalFeed;
  invitations: InvitationStore;
  /** Relying party id passkeys are bound to (the origin's host name unless configured). */
  rpId: string;
  /** The site name authenticators show. */
  rpName: string;
  /** The inbox's public origin (`http://localhost:8787`): sign-in audience, WebAuthn origin. */
  origin: string;
  /** `Host` header values accepted (DNS-rebinding defence). */
  allowedHosts: ReadonlySet<string>;
  /** Whether the session cookie carries `Secure` (always, unless explicitly turned off). */
  secureCookies: boolean;
  now: () => Date;
}

/** The signed-in approver of a request, as the authentication middleware found them. */
export interface AuthenticatedSession extends Session {
  approver: Approver;
  /** How the session token arrived: an HttpOnly cookie (browser) or a Bearer header (API client). */
  via: 'cookie' | 'bearer';
  /** The session token itself, so a long-lived response (SSE) can re-check it; never sent back. */
  token: string;
}

/** Hono environment of the service's routes. */
export interface InboxEnv {
  Variables: {
    session: AuthenticatedSession;
  };
}

/** Name of the session cookie (the `__Host-` prefix pins it to this host, path `/`, Secure). */
export const SESSION_COOKIE = '__Host-veridex_session';
