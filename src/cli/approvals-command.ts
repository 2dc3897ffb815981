import { parseArgs } from 'node:util';
import { ApprovalManager, type ApprovalRequest, requiredApprovals } from '../approvals/index.js';
import { AuditLog, PostgresAuditStore } from '../audit/index.js';
import { DATABASE_OPTION_HELP, openCommandDatabase } from './database-option.js';
import { type CliIo, EXIT, UsageError } from './io.js';

export const APPROVALS_USAGE = `Usage:
  veridex approvals list [--thread ID] [--as APPROVER] [--json]
  veridex approvals approve <approval-id> --as APPROVER [--reason TEXT]
  veridex approvals reject <approval-id> --as APPROVER --reason TEXT

Lists and decides pending approval requests in the configured database. Decisions are
recorded in the thread's audit log; resume the thread afterwards (resumeThread(graph, threadId)).
${DATABASE_OPTION_HELP}`;

/** `veridex approvals list|approve|reject`. */
export async function approvalsCommand(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      as: { type: 'string' },
      reason: { type: 'string' },
      thread: { type: 'string' },
      json: { type: 'boolean' },
      'database-url': { type: 'string' },
    },
  });
  const [action, id, ...extra] = positionals;
  if (extra.length > 0) throw new UsageError(`unexpected arguments: ${extra.join(' ')}`);
  if (action === 'list') {
    if (id) throw new UsageError('list takes no approval id');
  } else if (action === 'approve' || action === 'reject') {
    if (!id) throw new UsageError(`${action} needs an approval id`);
    if (!values.as) throw new UsageError(`${action} needs --as <approver>`);
    if (action === 'reject' && !values.reason) throw new UsageError('reject needs --reason');
  } else {
    throw new UsageError('expected list, approve or reject');
  }

  const db = await openCommandDatabase(values['database-url']);
  try {
    const manager = new ApprovalManager({
      db,
      audit: new AuditLog({ store: new PostgresAuditStore(db) }),
    });
    if (action === 'list') {
      const pending = await manager.listPending({
        ...(values.thread ? { threadId: values.thread } : {}),
        ...(values.as ? { approver: values.as } : {}),
      });
      if (values.json) io.out(JSON.stringify(pending, null, 2));
      else if (pending.length === 0) io.out('No pending approvals.');
      else for (const request of pending) io.out(describe(request));
      return EXIT.ok;
    }
    const decided = await manager.decide(id!, {
      decision: action === 'approve' ? 'approve' : 'reject',
      approver: values.as!,
      ...(values.reason ? { reason: values.reason } : {}),
    });
    io.out(
      `${id}: ${decided.status} (${approvalCount(decided)} of ${requiredApprovals(decided)} approvals)`,
    );
    if (decided.status !== 'pending')
      io.out(`Resume thread ${decided.threadId} to continue the run.`);
    return EXIT.ok;
  } finally {
    await db.close();
  }
}

function approvalCount(request: ApprovalRequest): number {
  return request.decisions.filter(
    (decision) => decision.decision === 'approve' && decision.tier === request.tierIndex,
  ).length;
}

function describe(request: ApprovalRequest): string {
  const proposal = request.proposal as { toolName?: string; arguments?: unknown };
  return [
    `${request.id}  ${request.route}  thread ${request.threadId}`,
    `  ${proposal.toolName ?? request.subjectId} ${JSON.stringify(proposal.arguments ?? {})}`,
    `  rule ${request.ruleId}: ${request.reason}`,
    `  approvals ${approvalCount(request)} of ${requiredApprovals(request)}, tier ${request.tiers[request.tierIndex]?.name}, expires ${request.expiresAt}`,
    `  proposed by ${request.proposer}, proposal hash ${request.proposalHash}`,
  ].join('\n');
}
