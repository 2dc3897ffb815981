import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { fromMcpClient } from '../../src/adapters/index.js';
import { VeridexError } from '../../src/errors/index.js';

type Listed = { name: string; description?: string; inputSchema: Record<string, unknown> };

/** A hostile MCP server (the SDK's low-level `Server`): `page(n)` answers the n-th tools/list. */
async function hostileServer(page: (index: number) => { tools: Listed[]; nextCursor?: string }) {
  const server = new Server({ name: 'hostile', version: '1.0.0' }, { capabilities: { tools: {} } });
  const served = { pages: 0 };
  server.setRequestHandler(ListToolsRequestSchema, async () => page(served.pages++));
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'importer', version: '1.0.0' });
  await client.connect(clientSide);
  return { client, served };
}

const schema = { type: 'object', properties: { id: { type: 'string' } } };
const one = (name: string, description = 'A tool.'): Listed => ({
  name,
  description,
  inputSchema: schema,
});

describe('fromMcpClient against a hostile server', () => {
  it('stops following a cursor that never ends at maxPages, and lets timers run meanwhile', async () => {
    const { client, served } = await hostileServer((index) => ({
      tools: [one(`tool_${index}`)],
      nextCursor: `cursor-${index + 1}`,
    }));
    let timerFired = false;
    setTimeout(() => (timerFired = true), 0);
    const outcome = await fromMcpClient(client, { safetyClassFor: 'read', lockFile: false }).then(
      () => ({ error: undefined, timerFired }),
      (error: unknown) => ({ error, timerFired }),
    );
    expect(VeridexError.is(outcome.error, 'import_too_large')).toBe(true);
    expect((outcome.error as Error).message).toContain('100 pages');
    expect(served.pages).toBeLessThanOrEqual(101);
    // The import yields to the event loop between pages: a timer set before it fires during it.
    expect(outcome.timerFired).toBe(true);
  });

  it('bounds the time spent listing, the number of tools and the bytes listed', async () => {
    const endless = await hostileServer((index) => ({
      tools: [one(`tool_${index}`)],
      nextCursor: `c${index + 1}`,
    }));
    const slow = await fromMcpClient(endless.client, {
      safetyClassFor: 'read',
      lockFile: false,
      // Only the clock may stop it: a fast machine lists past any tool or byte bound in 200 ms.
      limits: {
        maxPages: 1_000_000_000,
        maxTools: 1_000_000_000,
        maxBytes: 1_000_000_000,
        listTimeoutMs: 200,
      },
    }).catch((e: unknown) => e);
    expect(VeridexError.is(slow, 'import_too_large')).toBe(true);
    expect((slow as Error).message).toContain('200 ms');

    const many = await hostileServer((index) => ({
      tools: Array.from({ length: 600 }, (_, n) => one(`t${index}_${n}`)),
      ...(index < 5 ? { nextCursor: `c${index + 1}` } : {}),
    }));
    const tooMany = await fromMcpClient(many.client, {
      safetyClassFor: 'read',
      lockFile: false,
    }).catch((e: unknown) => e);
    expect(VeridexError.is(tooMany, 'import_too_large')).toBe(true);
    expect((tooMany as Error).message).toContain('1000 tools');
    expect(many.served.pages).toBe(2);

    const big = await hostileServer((index) => ({
      tools: [one(`big_${index}`, 'x'.repeat(1_000_000))],
      ...(index < 50 ? { nextCursor: `c${index + 1}` } : {}),
    }));
    const tooBig = await fromMcpClient(big.client, {
      safetyClassFor: 'read',
      lockFile: false,
    }).catch((e: unknown) => e);
    expect(VeridexError.is(tooBig, 'import_too_large')).toBe(true);
    expect((tooBig as Error).message).toContain(`${8 * 1024 * 1024} bytes`);
    // 1 MB a page against the 8 MiB default: the ninth page crosses it.
    expect(big.served.pages).toBe(9);
  });

  it('reports a page still unanswered at the deadline as the time bound, not a transport error', async () => {
    const server = new Server(
      { name: 'stalls', version: '1.0.0' },
      { capabilities: { tools: {} } },
    );
    server.setRequestHandler(ListToolsRequestSchema, () => new Promise<never>(() => {}));
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 'importer', version: '1.0.0' });
    await client.connect(clientSide);
    const error = await fromMcpClient(client, {
      safetyClassFor: 'read',
      lockFile: false,
      limits: { listTimeoutMs: 100 },
    }).catch((e: unknown) => e);
    expect(VeridexError.is(error, 'import_too_large')).toBe(true);
    expect((error as Error).message).toContain('100 ms');
  });

  it('refuses a cursor the server already gave (a loop)', async () => {
    const { client, served } = await hostileServer((index) => ({
      tools: [one(`tool_${index}`)],
      nextCursor: index % 2 === 0 ? 'a' : 'b',
    }));
    const error = await fromMcpClient(client, { safetyClassFor: 'read', lockFile: false }).catch(
      (e: unknown) => e,
    );
    expect(VeridexError.is(error, 'import_invalid')).toBe(true);
    expect(served.pages).toBe(3);
  });

  it('refuses two tools whose names normalise to the same name, whatever classes they would get', async () => {
    for (const [first, second] of [
      ['get.doc2', 'get_doc2'],
      ['Get_Doc2', 'get-doc2'],
    ] as const) {
      const { client } = await hostileServer(() => ({ tools: [one(first), one(second)] }));
      const error = await fromMcpClient(client, {
        safetyClassFor: (info) => (info.name === first ? 'read' : 'privileged'),
        lockFile: false,
      }).catch((e: unknown) => e);
      expect(VeridexError.is(error, 'tool_name_clash'), `${first} / ${second}`).toBe(true);
      expect((error as Error).message).toContain(first);
      expect((error as Error).message).toContain(second);
    }
  });
});
