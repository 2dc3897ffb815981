// Evidence over HTTP: a sealed bundle kept in the database is served by the approvals service
// (`GET /api/threads/{id}/evidence`, sessions only) and `veridex verify <URL>` checks it like a
// file — a copy the server holds proves nothing by itself.

import { MemorySaver } from '@langchain/langgraph';
import { createAgent } from 'langchain';
import { afterEach, expect, it } from 'vitest';
import { Ed25519Signer, latestEvidence } from '../../src/audit/index.js';
import { governanceMiddleware } from '../../src/middleware/index.js';
import { sealThreadEvidence } from '../../src/nodes/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { describeEachDatabase } from '../support/databases.js';
import { startTestInbox, type TestInbox } from '../support/inbox.js';
import { runVeridex } from '../support/run-cli.js';

const signer = new Ed25519Signer(new Uint8Array(32).fill(41));
const publicKeyHex = Buffer.from(signer.publicKey).toString('hex');

describeEachDatabase('evidence over HTTP', (context) => {
  let inbox: TestInbox | undefined;
  afterEach(async () => {
    await inbox?.close();
    inbox = undefined;
  });

  it('serves the latest sealed bundle to a session; veridex verify <URL> says VALID, and INVALID once an insider edits the stored copy', {
    timeout: 240_000,
  }, async () => {
    const db = context.db();
    inbox = await startTestInbox(db);
    const { audit, call, login, server } = inbox;
    await audit.append({
      threadId: 't-ev',
      runId: 'r1',
      type: 'run_started',
      payload: { messages: 1 },
    });
    await sealThreadEvidence('t-ev', { audit, signers: [signer], db }, { runId: 'r1' });
    const url = `${server.url}/api/threads/t-ev/evidence`;
    expect((await fetch(url)).status).toBe(401);
    const { token } = await login('bob');
    const served = await call('/api/threads/t-ev/evidence', { token });
    expect(served.status).toBe(200);
    expect(served.headers.get('etag')).toMatch(/^"[0-9a-f]{64}"$/);
    expect(await served.json()).toMatchObject({
      payloadType: expect.any(String),
      signatures: [expect.any(Object)],
    });
    expect((await call('/api/threads/nope/evidence', { token })).status).toBe(404);

    const cli = { env: { VERIDEX_INBOX_TOKEN: token }, timeoutMs: 200_000 };
    const valid = await runVeridex(['verify', url, '--key', publicKeyHex], cli);
    expect(valid.code, valid.stderr).toBe(0);
    expect(valid.stdout).toMatch(/VALID/);
    const anonymous = await runVeridex(['verify', url, '--key', publicKeyHex], {
      env: { VERIDEX_INBOX_TOKEN: '' },
      timeoutMs: 200_000,
    });
    expect(anonymous.code).toBe(1);
    expect(anonymous.stderr).toContain('401');

    // An insider rewrites the stored payload: the signature no longer covers it.
    await db.query(
      `UPDATE veridex_evidence SET bundle = jsonb_set(bundle, '{payload}', to_jsonb(encode(convert_to('{"forged":true}', 'UTF8'), 'base64'))) WHERE thread_id = 't-ev'`,
    );
    const forged = await runVeridex(['verify', url, '--key', publicKeyHex], cli);
    expect(forged.code).toBe(1);
    expect(forged.stdout).toMatch(/INVALID/);
  });

  it('the createAgent middleware keeps each sealed bundle in its database by default', async () => {
    const db = context.db();
    const agent = createAgent({
      model: scriptedModel(['just text']),
      tools: [],
      middleware: [governanceMiddleware({ db, evidence: { signers: [signer] } })] as never,
      checkpointer: new MemorySaver(),
    }) as unknown as { invoke(input: unknown, config: unknown): Promise<unknown> };
    await agent.invoke(
      { messages: [{ role: 'user', content: 'hi' }] },
      { configurable: { thread_id: 't-mw-ev' } },
    );
    const stored = await latestEvidence(db, 't-mw-ev');
    expect(stored?.bundle).toMatchObject({ signatures: [expect.any(Object)] });
  });
});
