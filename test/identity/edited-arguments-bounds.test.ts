import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ApprovalManager } from '../../src/approvals/index.js';
import { AuditLog, MemoryAuditStore } from '../../src/audit/index.js';
import { VeridexError } from '../../src/errors/index.js';
import {
  describeUnboundedEditedArguments,
  MAX_EDITED_ARGUMENTS_DEPTH,
  signDecision,
} from '../../src/identity/index.js';
import { testApproverInits, testKey } from '../support/approvers.js';
import { escalate, transferProposal } from '../support/proposals.js';

const nested = (depth: number): unknown => {
  let value: unknown = 'leaf';
  for (let level = 0; level < depth; level++) value = [value];
  return value;
};

describe("an edit's replacement arguments are bounded before anything recurses over them", () => {
  it('accepts arguments up to the depth bound and refuses one level more', () => {
    expect(describeUnboundedEditedArguments({ to: nested(MAX_EDITED_ARGUMENTS_DEPTH - 1) })).toBe(
      undefined,
    );
    expect(describeUnboundedEditedArguments({ to: nested(MAX_EDITED_ARGUMENTS_DEPTH) })).toMatch(
      /nest at most/,
    );
  });

  it('walks 100,000 levels without overflowing the stack, and refuses too many values', () => {
    expect(describeUnboundedEditedArguments({ to: nested(100_000) })).toMatch(/nest at most/);
    expect(describeUnboundedEditedArguments({ to: Array(200_000).fill(0) })).toMatch(
      /at most 100000 values/,
    );
  });

  it('accepts every ordinary JSON object within the bounds', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 8 })), (value) => {
        expect(describeUnboundedEditedArguments(value)).toBe(undefined);
      }),
    );
  });

  it('ApprovalManager.decide refuses a signed edit nested 20,000 deep as resume_payload_invalid and records it', async () => {
    const audit = new AuditLog({ store: new MemoryAuditStore() });
    const manager = new ApprovalManager({ audit, approvers: testApproverInits(['bob']) });
    const request = await manager.request(transferProposal('th-deep'), escalate('human_required'));
    const signed = signDecision(
      { request, decision: 'edit', approver: 'bob', editedArgs: { to: 'x' } },
      testKey('bob'),
    );
    const error = await manager
      .decide(request.id, { ...signed, editedArgs: { to: nested(20_000) } })
      .catch((caught: unknown) => caught);
    expect(VeridexError.is(error, 'resume_payload_invalid')).toBe(true);
    const kinds = (await audit.events('th-deep'))
      .filter((event) => event.type === 'security_event')
      .map((event) => event.payload.kind);
    expect(kinds).toContain('resume_payload_invalid');
  });
});
