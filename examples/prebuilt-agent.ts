// The prebuilt governed agent with every default except the model: a scripted one runs offline.
// (Set OPENAI_API_KEY and drop `model` to use ChatOpenAI.) Uses a temporary PGlite directory.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKeyPair } from '@veridex/langgraph/audit';
import { createDatabase } from '@veridex/langgraph/db';
import { signDecision } from '@veridex/langgraph/identity';
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
// Two approvers, registered in the agent's database with their public keys; each signs.
const approvers = { 'alice@ops.example': generateKeyPair(), 'bob@ops.example': generateKeyPair() };
for (const [id, pair] of Object.entries(approvers)) {
  await agent.approvals.directory.add({ id, publicKeys: [pair.publicKey] });
}
const [pending] = run.pendingApprovals;
const result = await agent.resume(
  run.threadId,
  Object.entries(approvers).map(([approver, pair]) =>
    signDecision({ request: pending!, decision: 'approve', approver }, pair.privateKey),
  ),
);
console.log(result.status, '—', result.output, '— evidence:', result.evidencePath);
await agent.database.close();
