import { randomUUID } from 'node:crypto';
import { VeridexError } from '../errors/index.js';
import { resolveRuntime, runTool } from '../governance/index.js';
import { requireGovernedTools } from '../governance/safety-class-config.js';
import type { AnyGovernedTool } from '../tools/types.js';
import type { McpRequestExtra, McpServerLike } from './mcp-types.js';
import type { GovernedToolRuntime } from './to-langchain-tool.js';

type Extra = McpRequestExtra;

/** Options for {@link serveMcp}. */
export interface ServeMcpOptions extends GovernedToolRuntime {
  /** A server to add the tools to (default: a new `McpServer`). */
  server?: McpServerLike;
  /** Name and version of a new server (default `veridex`, `0.1.0`). */
  name?: string;
  version?: string;
  /** Audit thread of a request (default `mcp:<session id>` or `mcp:default`). */
  threadIdFor?: (extra: Extra) => string;
}

/**
 * Exposes governed tools as an MCP server (`@modelcontextprotocol/sdk`, tools registered with
 * `registerTool`, so listing, capabilities and annotations are the SDK's). Every `tools/call`
 * runs through `runTool` — pin, validation, policy, approvals, sandbox, sanitiser, idempotency
 * and audit — with the raw arguments: the server's call handler is replaced so the SDK does
 * not parse them first. A call that needs approval is refused (`approval_required`, with the
 * request id in the message) until the request is decided; then the client sends it again with
 * the same `_meta['veridex/toolCallId']`. Tool-level failures come back as `isError` results with the model-safe message. A
 * client may name a call with `_meta: { 'veridex/toolCallId': id }` (replay-safe audit ids,
 * idempotency across its retries); otherwise each call gets a random id.
 * Connect the returned server to any transport.
 *
 * @example const server = await serveMcp([getWeather], { audit }); await server.connect(new StdioServerTransport());
 */
export async function serveMcp(
  tools: readonly AnyGovernedTool[],
  options: ServeMcpOptions = {},
): Promise<McpServerLike> {
  requireGovernedTools(tools, options, 'serveMcp');
  // Module names as strings: the optional SDK's types are not needed to compile against us.
  const [{ McpServer }, { CallToolRequestSchema }] = (await Promise.all([
    import('@modelcontextprotocol/sdk/server/mcp.js' as string),
    import('@modelcontextprotocol/sdk/types.js' as string),
  ])) as [
    { McpServer: new (info: { name: string; version: string }) => McpServerLike },
    { CallToolRequestSchema: never },
  ];
  const server =
    options.server ??
    new McpServer({ name: options.name ?? 'veridex', version: options.version ?? '0.1.0' });
  const byName = new Map<string, AnyGovernedTool>();
  for (const tool of tools) {
    if (byName.has(tool.name))
      throw new VeridexError('config_invalid', `serveMcp: two tools are named "${tool.name}".`);
    byName.set(tool.name, tool);
    server.registerTool(
      tool.name,
      {
        description: tool.description,
        inputSchema: tool.input as never,
        ...(tool.annotations ? { annotations: tool.annotations } : {}),
        _meta: { 'veridex/schemaHash': tool.schemaHash, 'veridex/safetyClass': tool.safetyClass },
      },
      (() => {
        throw new Error('unreachable: calls go through the governed handler');
      }) as never,
    );
  }
  const { server: _name, name: _server, version: _version, threadIdFor, ...governance } = options;
  const runtime = resolveRuntime(governance, tools);
  server.server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const tool = byName.get(request.params.name);
    if (tool === undefined) {
      return {
        content: [{ type: 'text' as const, text: `Tool ${request.params.name} not found.` }],
        isError: true,
      };
    }
    const threadId = threadIdFor?.(extra) ?? `mcp:${extra.sessionId ?? 'default'}`;
    // An MCP client cannot resume a LangGraph thread: calls that need approval are refused
    // with approval_required (naming the request), never run.
    const result = await runTool(tool, request.params.arguments ?? {}, {
      runtime,
      threadId,
      toolCallId: callIdOf(request.params._meta),
      signal: extra.signal,
      suspend: 'never',
    });
    const text = result.status === 'success' ? result.content : result.message;
    return {
      content: [{ type: 'text' as const, text }],
      ...(result.status === 'error' ? { isError: true } : {}),
    };
  });
  return server;
}

// MCP request ids restart with every connection, so they cannot name a call. A client that
// wants replay-safe ids (and idempotency across its retries) sends `_meta['veridex/toolCallId']`.
function callIdOf(meta: Record<string, unknown> | undefined): string {
  const given = meta?.['veridex/toolCallId'];
  return typeof given === 'string' && given.length > 0 && given.length <= 200
    ? given
    : `mcp_${randomUUID()}`;
}
