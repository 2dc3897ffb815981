export type { InboxEvent, InboxEventType, InboxListener } from './approval-feed.js';
export { ApprovalFeed } from './approval-feed.js';
export type { ApprovalDetailView, ApprovalView, DecisionView } from './approval-view.js';
export {
  type ApprovalsApp,
  type ApprovalsAppOptions,
  createApprovalsApp,
} from './create-approvals-app.js';
export { SESSION_COOKIE } from './inbox-context.js';
export {
  type Invitation,
  InvitationStore,
  invitationLink,
} from './invitations.js';
export {
  LOGIN_PAYLOAD_TYPE,
  type LoginStatement,
  loginSigningMessage,
  type SignedLogin,
  signLogin,
} from './key-login.js';
export { openApiDocument } from './openapi.js';
export { type PasskeyDecisionInput, type PasskeyOptions, Passkeys } from './passkeys.js';
export { ADMIN_ROLE } from './routes/passkey-routes.js';
export type { ConversationMessage, RunView } from './run-view.js';
export { DEFAULT_SESSION_TTL_MS, type Session, type SessionMethod } from './session-store.js';
export {
  type RunningApprovalsServer,
  type StartApprovalsServerOptions,
  startApprovalsServer,
} from './start-approvals-server.js';
export {
  defaultBackoff,
  type WebhookDelivery,
  WebhookDispatcher,
  type WebhookEndpoint,
  type WebhookOptions,
} from './webhooks.js';
