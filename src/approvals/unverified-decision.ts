import { describeUnboundedEditedArguments, MAX_REASON_LENGTH } from '../identity/index.js';
import type { UnverifiedDecision } from './types.js';

/** Why `input` is not a well-formed bare decision, or `undefined` when it is. */
export function describeMalformedUnverified(input: unknown): string | undefined {
  if (typeof input !== 'object' || input === null) return 'a decision must be an object';
  const decision = input as Partial<UnverifiedDecision>;
  if (!['approve', 'reject', 'edit'].includes(decision.decision as string)) {
    return `decision must be "approve", "reject" or "edit", got ${JSON.stringify(decision.decision)?.slice(0, 40)}`;
  }
  if (typeof decision.approver !== 'string' || decision.approver.trim() === '') {
    return 'approver must be a non-empty string';
  }
  if (
    decision.reason !== undefined &&
    (typeof decision.reason !== 'string' || decision.reason.length > MAX_REASON_LENGTH)
  ) {
    return `reason must be a string of at most ${MAX_REASON_LENGTH} characters`;
  }
  if (decision.decision === 'edit') {
    const args = decision.editedArgs;
    if (typeof args !== 'object' || args === null || Array.isArray(args)) {
      return 'an edit decision needs editedArgs: the replacement arguments object';
    }
    const unbounded = describeUnboundedEditedArguments(args);
    if (unbounded !== undefined) return unbounded;
  }
  return undefined;
}
