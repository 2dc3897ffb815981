// An OpenAPI document becomes governed tools: one per operation, classed by method, confined
// to the server's host, authenticated through a secret the model never sees, and pinned.
// Offline: the "API" is a small HTTP server on 127.0.0.1, allowlisted explicitly.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fromOpenAPI } from '@veridex/langgraph/adapters';
import { runTool } from '@veridex/langgraph/governance';
import { InProcessSandbox } from '@veridex/langgraph/sandbox';
import { SecretsProvider } from '@veridex/langgraph/tools';

const server = createServer((request, response) => {
  const authorized = request.headers.authorization === 'Bearer example-token-0123456789';
  response.writeHead(authorized ? 200 : 401, { 'content-type': 'application/json' });
  response.end(
    JSON.stringify(
      authorized ? { id: 42, url: request.url, status: 'open' } : { error: 'unauthorized' },
    ),
  );
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`;

const spec = {
  openapi: '3.1.0',
  info: { title: 'Helpdesk', version: '1.0.0' },
  servers: [{ url: 'https://support.example.com/api' }],
  paths: {
    '/tickets/{id}': {
      get: {
        operationId: 'getTicket',
        summary: 'Show a ticket',
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'integer' } }],
        responses: { '200': { description: 'The ticket.' } },
      },
      delete: {
        operationId: 'deleteTicket',
        summary: 'Delete a ticket',
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'integer' } }],
        responses: { '204': { description: 'Deleted.' } },
      },
    },
  },
};

const tools = await fromOpenAPI(spec, {
  baseUrl, // default: the document's first server
  auth: { type: 'bearer', secret: 'HELPDESK_TOKEN' },
  lockFile: false, // default: pins in veridex.tools.lock.json, checked on every import
});
for (const tool of tools)
  console.log(`${tool.name}: ${tool.safetyClass}, reaches ${tool.sandbox?.networkAllowlist}`);

const result = await runTool(
  tools[0]!,
  { path: { id: 42 } },
  {
    sandbox: new InProcessSandbox({ networkAllowlist: ['127.0.0.1'], allowHttp: true }),
    secrets: new SecretsProvider(new Map([['HELPDESK_TOKEN', 'example-token-0123456789']])),
  },
);
console.log(result.status === 'success' ? `getTicket -> ${result.content}` : result.message);
server.close();
if (result.status !== 'success') process.exitCode = 1;
