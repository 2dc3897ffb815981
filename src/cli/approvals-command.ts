import { parseArgs } from 'node:util';
import {
  ApprovalManager,
  type ApprovalRequest,
  type DecisionInput,
  requiredApprovals,
  type ShownProposal,
} from '../approvals/index.js';
import { AuditLog, Ed25519Signer, PostgresAuditStore, readPrivateKey } from '../audit/index.js';
import { signDecision } from '../identity/index.js';
import { DATABASE_OPTION_HELP, openCommandDatabase } from './database-option.js';
import { type CliIo, EXIT, UsageError } from './io.js';

export const APPROVALS_USAGE = `Usage:
  veridex approvals list [--thread ID] [--as APPROVER] [--json]
  veridex approvals approve <approval-id> --key PRIVATE_KEY_FILE [--reason TEXT]
  veridex approvals reject <approval-id> --key PRIVATE_KEY_FILE --reason TEXT
  veridex approvals approve|reject <approval-id> --unverified --as NAME [--reason TEXT]

Lists and decides pending approval requests in the configured database. A decision is signed
with the approver's private key (veridex approvers keygen); who decides comes from the key,
as registered in the approver directory. --unverified --as NAME sends a bare name instead:
counted only by agents running the explicit identity: 'unverified' development mode.
Decisions are recorded in the thread's audit log; resume the thread afterwards
(resumeThread(graph, threadId)).
${DATABASE_OPTION_HELP}`;

/** `veridex approvals list|approve|reject`. */
export async function approvalsCommand(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      as: { type: 'string' },
      key: { type: 'string' },
      unverified: { type: 'boolean' },
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
    if (values.unverified ? !values.as || values.key : !values.key || values.as) {
      throw new UsageError(
        `${action} needs --key <approver private key file> (or, for the unverified development mode only, --unverified --as <name>)`,
      );
    }
    if (action === 'reject' && !values.reason) throw new UsageError('reject needs --reason');
  } else {
    throw new UsageError('expected list, approve or reject');
  }

  const db = await openCommandDatabase(values['database-url']);
  try {
    const manager = new ApprovalManager({
      db,
      audit: new AuditLog({ store: new PostgresAuditStore(db) }),
      // A bare name counts only where the deciding process itself runs the development mode.
      ...(values.unverified ? { identity: 'unverified' as const } : {}),
    });
    if (action === 'list') {
      const pending = await manager.listPending({
        ...(values.thread ? { threadId: values.thread } : {}),
        ...(values.as ? { approver: values.as } : {}),
      });
      // Each proposal only as bound to its hash (what an approver signs), never the row's copy.
      const listed = [];
      for (const request of pending) {
        listed.push({ request, shown: await manager.shownProposal(request) });
      }
      if (values.json) io.out(JSON.stringify(listed.map(asJson), null, 2));
      else if (listed.length === 0) io.out('No pending approvals.');
      else for (const item of listed) io.out(describe(item.request, item.shown));
      return EXIT.ok;
    }
    const decision = action === 'approve' ? 'approve' : 'reject';
    // What `list` showed is what is decided: a request whose stored proposal is not bound to its
    // hash is refused here (`proposal_tampered`), signed or not.
    await manager.requireShownProposal(await manager.require(id!));
    let input: DecisionInput;
    if (values.key) {
      const signer = new Ed25519Signer(readPrivateKey(values.key));
      const holder = await manager.directory.findByKey(signer.keyId);
      if (!holder) {
        throw new UsageError(
          `key ${signer.keyId} is not registered to any approver (veridex approvers add <id> --key <public key>)`,
        );
      }
      const request = await manager.require(id!);
      input = signDecision(
        {
          request,
          decision,
          approver: holder.approver.id,
          ...(values.reason ? { reason: values.reason } : {}),
        },
        signer,
      );
    } else {
      input = {
        decision,
        approver: values.as!,
        ...(values.reason ? { reason: values.reason } : {}),
      };
    }
    const decided = await manager.decide(id!, input);
    const by =
      'statement' in input
        ? `signed by ${input.statement.approver} (${input.keyId})`
        : `UNVERIFIED as ${values.as}`;
    io.out(
      `${id}: ${decided.status} (${approvalCount(decided)} of ${requiredApprovals(decided)} approvals) — ${by}`,
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

/** A request as `list --json` prints it: its proposal and summary only as bound to the hash. */
function asJson({ request, shown }: { request: ApprovalRequest; shown: ShownProposal }) {
  return {
    ...request,
    proposalBinding: shown.binding,
    ...(shown.binding === 'none'
      ? { proposal: {}, summary: {}, proposalProblem: shown.problem }
      : { proposal: shown.proposal, summary: shown.summary }),
  };
}

function describe(request: ApprovalRequest, shown: ShownProposal): string {
  const proposal = (shown.binding === 'none' ? {} : shown.proposal) as {
    toolName?: string;
    arguments?: unknown;
  };
  return [
    `${request.id}  ${request.route}  thread ${request.threadId}`,
    shown.binding === 'none'
      ? `  PROPOSAL NOT SHOWN (proposal_tampered): ${shown.problem}; it cannot be decided here`
      : `  ${proposal.toolName ?? request.subjectId} ${JSON.stringify(proposal.arguments ?? {})}${shown.binding === 'redacted' ? '  (secrets redacted at rest)' : ''}`,
    `  rule ${request.ruleId}: ${request.reason}`,
    `  approvals ${approvalCount(request)} of ${requiredApprovals(request)}, tier ${request.tiers[request.tierIndex]?.name}, expires ${request.expiresAt}`,
    ...request.decisions.map(
      (d) =>
        `  ${d.decision} by ${d.approver}${d.signed ? ` (signed, ${d.signed.keyId})` : ' (UNVERIFIED)'} at ${d.decidedAt}`,
    ),
    `  proposed by ${[request.proposer, ...request.proposers.filter((p) => p !== request.proposer)].join(', ')}, proposal hash ${request.proposalHash}`,
    ...(request.identityMode === 'unverified'
      ? ['  identity mode: UNVERIFIED (development only: bare names count)']
      : []),
  ].join('\n');
}
