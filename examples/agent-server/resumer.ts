// The worker that continues this deployment's runs when their approvals resolve: a decision
// made in the inbox (`veridex serve`), with `veridex approvals approve`, or by any process
// sharing the database resumes the suspended thread on the Agent Server through its API — no
// client sends anything. Run it beside the server (one or several: each resolution is taken
// under a lease, so they never resume a thread twice):
//   AGENT_SERVER_URL=http://127.0.0.1:2024 npx tsx resumer.ts
import { RemoteGraph } from '@langchain/langgraph/remote';
import { ApprovalManager } from '@veridex/langgraph/approvals';
import { AuditLog, PostgresAuditStore } from '@veridex/langgraph/audit';
import { createDatabase, migrate } from '@veridex/langgraph/db';
import { startResumer } from '@veridex/langgraph/nodes';

const url = process.env.AGENT_SERVER_URL ?? 'http://127.0.0.1:2024';
const db = await createDatabase(); // the database the graph module uses
await migrate(db);
const audit = new AuditLog({ store: new PostgresAuditStore(db) });

const resumer = startResumer({
  // The deployed graph, driven through the server's API (`@langchain/langgraph-sdk`).
  graph: new RemoteGraph({
    graphId: 'refunds',
    url,
    ...(process.env.LANGSMITH_API_KEY ? { apiKey: process.env.LANGSMITH_API_KEY } : {}),
  }),
  db,
  agentId: 'refund-bot', // graph.ts's AGENT_ID: only this agent's requests are claimed
  approvals: new ApprovalManager({ db, audit }),
  audit,
  onOutcome: (outcome) => console.log(`${outcome.outcome} ${outcome.threadId} (${outcome.status})`),
});
console.log(`resuming ${url} (listening: ${await resumer.listening})`);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, async () => {
    await resumer.stop();
    await db.close();
  });
}
