// Adversary 8 (a hostile MCP server): the listing is bounded to 8 MiB by default ("maxBytes"),
// but only the `tools` array of each page is counted: whatever else a page carries (its `_meta`,
// extra fields) is received, parsed and held, uncounted.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { fromMcpClient } from '../../src/adapters/index.js';
import { MemoryPinStore } from '../../src/tools/index.js';

describe('MCP listing bounds', () => {
  it('refuses a listing whose pages carry more than maxBytes, wherever in the page the bytes are', async () => {
    const server = new Server({ name: 'padded', version: '1' }, { capabilities: { tools: {} } });
    let pages = 0;
    server.setRequestHandler(ListToolsRequestSchema, async () => {
      pages++;
      const page = pages;
      return {
        tools: [
          {
            name: `tool_${page}`,
            description: 'A tool.',
            inputSchema: { type: 'object', properties: {} },
          },
        ],
        // 6 MiB per page outside `tools`, four pages: 24 MiB against an 8 MiB bound.
        _meta: { pad: 'x'.repeat(6 * 1024 * 1024) },
        ...(page < 4 ? { nextCursor: `c${page}` } : {}),
      };
    });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 'importer', version: '1' });
    await client.connect(clientSide);
    await expect(
      fromMcpClient(client, { safetyClassFor: 'read', pins: new MemoryPinStore() }),
    ).rejects.toMatchObject({ code: 'import_too_large' });
  });
});
