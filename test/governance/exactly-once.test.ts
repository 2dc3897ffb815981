import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { expect, it } from 'vitest';
import { z } from 'zod';
import { AuditLog } from '../../src/audit/index.js';
import { runTool } from '../../src/governance/index.js';
import { governedToolNode } from '../../src/nodes/index.js';
import {
  type AnyGovernedTool,
  type IdempotencyStore,
  idempotencyKeyFor,
  PostgresIdempotencyStore,
  tool,
} from '../../src/tools/index.js';
import { describeEachDatabase } from '../support/databases.js';

/** The same email tool, as deployed twice: only the description was reworded. */
function emailTool(sent: string[], description: string, input = z.object({ to: z.string() })) {
  return tool({
    name: 'send_email',
    description,
    safetyClass: 'write',
    input,
    output: z.object({ sent: z.boolean() }),
    async execute({ input: args }) {
      sent.push((args as { to: string }).to);
      return { sent: true };
    },
  });
}

function call(tool: AnyGovernedTool, args: Record<string, unknown>, ledger: IdempotencyStore) {
  return runTool(tool, args, {
    threadId: 'support-thread',
    toolCallId: 'call_email_1',
    idempotency: ledger,
    audit: new AuditLog(),
  });
}

describeEachDatabase('exactly once, also across a deploy', ({ db }) => {
  it('finds the earlier execution after the tool’s description was reworded', async () => {
    const sent: string[] = [];
    const ledger = new PostgresIdempotencyStore(db());
    const before = emailTool(sent, 'Send an email.');
    expect(await call(before, { to: 'ana@example.com' }, ledger)).toMatchObject({
      status: 'success',
    });
    // A deploy: same tool, friendlier description (another schema pin), a fresh process.
    const after = emailTool(sent, 'Send one email to a customer, politely.');
    expect(after.schemaHash).not.toBe(before.schemaHash);
    expect(
      await call(after, { to: 'ana@example.com' }, new PostgresIdempotencyStore(db())),
    ).toMatchObject({
      status: 'success',
      replayed: true,
    });
    expect(sent).toEqual(['ana@example.com']);
  });

  it('does not run a call again that crashed after its side effect, whatever the deploy changed', async () => {
    const sent: string[] = [];
    const ledger = new PostgresIdempotencyStore(db());
    const key = idempotencyKeyFor({ threadId: 'support-thread', toolCallId: 'call_email_1' });
    // The first process reserved the key, started the side effect, and died (lease expired).
    await ledger.reserve(key, { owner: 'dead-process', toolName: 'send_email', leaseMs: 1 });
    await ledger.markExecuting(key, 'dead-process', 1);
    const reworded = emailTool(sent, 'Send one email (v2).');
    const result = await call(reworded, { to: 'ana@example.com' }, ledger);
    expect(result).toMatchObject({ status: 'error', code: 'idempotency_in_doubt' });
    expect(sent).toEqual([]);
  });

  it('refuses the same call id with other arguments or another input schema as a conflict', async () => {
    const sent: string[] = [];
    const ledger = new PostgresIdempotencyStore(db());
    await call(emailTool(sent, 'Send an email.'), { to: 'ana@example.com' }, ledger);
    const otherArgs = await call(
      emailTool(sent, 'Send an email.'),
      { to: 'eve@evil.example' },
      ledger,
    );
    expect(otherArgs).toMatchObject({ status: 'error', code: 'idempotency_conflict' });
    const widened = emailTool(
      sent,
      'Send an email.',
      z.object({ to: z.string(), bcc: z.string().optional() }),
    );
    expect(await call(widened, { to: 'ana@example.com' }, ledger)).toMatchObject({
      status: 'error',
      code: 'idempotency_conflict',
    });
    expect(sent).toEqual(['ana@example.com']);
  });

  it('keeps the at-most-once ledger in the database by default when the node is given one', async () => {
    const sent: string[] = [];
    const audit = new AuditLog();
    const input = {
      messages: [
        new HumanMessage('send it'),
        new AIMessage({
          content: '',
          tool_calls: [{ id: 'call_once', name: 'send_email', args: { to: 'ana@example.com' } }],
        }),
      ],
    };
    const config = { configurable: { thread_id: 'durable-thread' } };
    // Two node instances, as two processes (or a restart) would build them, sharing only the database.
    for (const _process of [1, 2]) {
      const node = governedToolNode({
        tools: [emailTool(sent, 'Send an email.')],
        db: db(),
        audit,
      });
      await node.invoke(input as never, config);
    }
    expect(sent).toEqual(['ana@example.com']);
  });
});
