import { randomUUID } from 'node:crypto';
import type { VeridexError } from '../errors/index.js';
import type { InboxContext } from './inbox-context.js';

/** The audit thread the service writes refusals to that belong to no approval's thread. */
export const INBOX_AUDIT_THREAD = 'veridex.inbox';

/**
 * Records a refused sign-in, enrolment or request as a `security_event`: on the approval's
 * thread when there is one, else on the service's own audit thread. Never the secret material.
 */
export async function recordRefusal(
  inbox: InboxContext,
  error: VeridexError,
  facts: { threadId?: string; approvalId?: string; approver?: string; route: string },
): Promise<void> {
  try {
    await inbox.audit.append({
      threadId: facts.threadId ?? INBOX_AUDIT_THREAD,
      eventId: `evt_${randomUUID()}`,
      type: 'security_event',
      payload: {
        kind: error.code,
        route: facts.route,
        ...(facts.approvalId !== undefined ? { approvalId: facts.approvalId } : {}),
        ...(facts.approver !== undefined ? { approver: facts.approver.slice(0, 256) } : {}),
        message: error.message,
      },
    });
  } catch {
    // The refusal itself is what matters to the caller; a failed audit append must not mask it.
  }
}
