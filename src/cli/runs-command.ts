import { closeSync, fstatSync, openSync, readSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import {
  checkpointReader,
  exportThread,
  importThread,
  type PortableRun,
  type ThreadGraph,
} from '../adapters/index.js';
import { ApprovalManager } from '../approvals/index.js';
import { AuditLog, canonicalJson, PostgresAuditStore } from '../audit/index.js';
import { PostgresCheckpointer } from '../checkpointer/index.js';
import { DATABASE_OPTION_HELP, openCommandDatabase } from './database-option.js';
import { type CliIo, EXIT, UsageError } from './io.js';
import { GRAPH_OPTION_HELP, loadGraph } from './load-graph.js';

export const RUNS_USAGE = `Usage:
  veridex runs export <thread-id> [--out run.json] [--graph MODULE#EXPORT]
  veridex runs import <run.json> --graph MODULE#EXPORT [--thread ID] [--trust-recorded-decisions]
                     [--drop-unsanitisable-parts]

export  writes the thread as a veridex.run/v1 document (RFC 8785 canonical JSON; schema in
        schemas/run-v1.schema.json): history, state, next nodes, pending approvals, memory
        delta and audit chain. Without --graph it reads the database directly.
import  checks the document (schema, audit chain, approvals against the graph's tools), writes
        it as a new thread of the graph, and re-derives its pending approvals through the
        graph's own policy. Approvers decide again after a move unless
        --trust-recorded-decisions (the file can claim any approver: trusted sources only).
        The run file is untrusted input; the --graph module is code you run. Every message it
        carries passes the output sanitiser; a content part the sanitiser cannot read (an
        image, a binary document) refuses the import unless --drop-unsanitisable-parts.
  --out FILE        write to FILE (mode 0600) instead of standard output
  --thread ID       import under another thread id (the audit chain is then left out)
${GRAPH_OPTION_HELP}
${DATABASE_OPTION_HELP} (export without --graph)`;

/** Largest run file `runs import` reads. */
export const MAX_RUN_FILE_BYTES = 256 * 1024 * 1024;

/** `veridex runs export|import`. */
export async function runsCommand(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      out: { type: 'string' },
      graph: { type: 'string' },
      thread: { type: 'string' },
      'trust-recorded-decisions': { type: 'boolean' },
      'drop-unsanitisable-parts': { type: 'boolean' },
      'database-url': { type: 'string' },
    },
  });
  const [action, target, ...extra] = positionals;
  if (extra.length > 0) throw new UsageError(`unexpected arguments: ${extra.join(' ')}`);
  if (action === 'export') {
    if (!target) throw new UsageError('export needs a thread id');
    const run = values.graph
      ? await exportThread(await loadGraph(values.graph), target)
      : await exportFromDatabase(target, values['database-url']);
    const text = canonicalJson(run);
    if (values.out) {
      writeFileSync(values.out, text, { mode: 0o600 });
      io.out(`Exported thread ${target} to ${values.out} (${describe(run)}).`);
    } else {
      io.out(text);
    }
    return EXIT.ok;
  }
  if (action === 'import') {
    if (!target) throw new UsageError('import needs a run file');
    if (!values.graph) throw new UsageError('import needs --graph MODULE#EXPORT');
    const document = readRunFile(target);
    const graph: ThreadGraph = await loadGraph(values.graph);
    const result = await importThread(graph, document, {
      ...(values.thread ? { threadId: values.thread, importAudit: false } : {}),
      ...(values['trust-recorded-decisions'] ? { trustRecordedDecisions: true } : {}),
      ...(values['drop-unsanitisable-parts'] ? { unsanitisableParts: 'drop' as const } : {}),
    });
    io.out(`Imported thread ${result.threadId} (${describe(document as PortableRun)}).`);
    io.out(`Audit events appended: ${result.auditEvents}.`);
    for (const { messageIndex, role, findings } of result.sanitisedMessages) {
      const kinds = [...new Set(findings.map((finding) => finding.kind))].join(', ');
      io.out(`  message ${messageIndex} (${role}) sanitised: ${kinds}`);
    }
    for (const approval of result.approvals) {
      io.out(`  ${approval.approvalId}: ${approval.status}`);
    }
    if (result.approvals.length > 0) {
      io.out('Decide with `veridex approvals approve|reject`, then resume the thread.');
    }
    return EXIT.ok;
  }
  throw new UsageError('expected export or import');
}

async function exportFromDatabase(threadId: string, url: string | undefined) {
  const db = await openCommandDatabase(url);
  try {
    const audit = new AuditLog({ store: new PostgresAuditStore(db) });
    return await exportThread(checkpointReader(PostgresCheckpointer.fromDatabase(db)), threadId, {
      audit,
      approvals: new ApprovalManager({ db, audit }),
    });
  } finally {
    await db.close();
  }
}

function readRunFile(path: string): unknown {
  let text: string;
  const fd = (() => {
    try {
      return openSync(path, 'r');
    } catch (error) {
      throw new UsageError(`cannot read ${path}: ${(error as Error).message}`);
    }
  })();
  try {
    const size = fstatSync(fd).size;
    if (size > MAX_RUN_FILE_BYTES) {
      throw new UsageError(
        `${path} is ${size} bytes; run files are limited to ${MAX_RUN_FILE_BYTES}`,
      );
    }
    const buffer = Buffer.alloc(size);
    let read = 0;
    while (read < size) {
      const n = readSync(fd, buffer, read, size - read, read);
      if (n === 0) break;
      read += n;
    }
    text = buffer.subarray(0, read).toString('utf8');
  } finally {
    closeSync(fd);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${path} is not JSON: ${(error as Error).message}`);
  }
}

function describe(run: PortableRun): string {
  const next = run.pending?.next?.length ? `waits on ${run.pending.next.join(', ')}` : 'finished';
  return `${run.messages?.length ?? 0} messages, ${next}, ${run.pending?.approvals?.length ?? 0} pending approval(s), ${run.audit?.eventCount ?? 0} audit events`;
}
