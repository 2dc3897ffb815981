// The prebuilt governed agent with every default except the model: a scripted one runs offline.
// (Set OPENAI_API_KEY and drop `model` to use ChatOpenAI.) Uses a temporary PGlite directory.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDatabase } from '@veridex/langgraph/db';
import { createGovernedAgent } from '@veridex/langgraph/nodes';
import { scriptedModel } from '@veridex/langgraph/testing';
import { tool } from '@veridex/langgraph/tools';
import { z } from 'zod';

const rotateKey = tool({
  name: 'rotate_api_key',
  description: 'Rotate the API key of a service.',
  safetyClass: 'privileged', // two approvals by default
  input: z.object({ service: z.string() }),
  output: z.object({ rotated: z.boolean() }),
  execute: async () => ({ rotated: true }),
});

const dir = mkdtempSync(join(tmpdir(), 'veridex-prebuilt-'));
const agent = await createGovernedAgent({
  name: 'ops-bot',
  model: scriptedModel([
    { toolCalls: [{ name: 'rotate_api_key', args: { service: 'billing' } }] },
    'Rotated the billing key.',
  ]),
  instructions: 'You operate infrastructure carefully.',
  tools: [rotateKey],
  database: await createDatabase({ dataDir: join(dir, 'db') }),
  evidenceDir: join(dir, 'evidence'),
  budget: { maxToolCalls: 5, maxWallClockMs: 30_000 },
});

const run = await agent.run('Rotate the billing API key.');
console.log(
  run.status,
  run.pendingApprovals.map((p) => `${p.tool}: ${p.route}`),
);
const [pending] = run.pendingApprovals;
const result = await agent.resume(run.threadId, [
  { approvalId: pending!.approvalId, decision: 'approve', approver: 'alice@ops.example' },
  { approvalId: pending!.approvalId, decision: 'approve', approver: 'bob@ops.example' },
]);
console.log(result.status, '—', result.output, '— evidence:', result.evidencePath);
await agent.database.close();
