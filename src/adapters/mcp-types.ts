// The parts of @modelcontextprotocol/sdk the adapters use, typed here so that importing
// `@veridex/langgraph/adapters` never needs the SDK's types: the SDK is an optional peer,
// loaded only when `serveMcp` runs. A real `Client` / `McpServer` fits these shapes.

/** What `fromMcpClient` needs of an MCP `Client` (from `@modelcontextprotocol/sdk/client`). */
export interface McpClientLike {
  listTools(
    params?: { cursor?: string },
    options?: { signal?: AbortSignal; timeout?: number },
  ): Promise<{
    tools: Array<{
      name: string;
      title?: string;
      description?: string;
      inputSchema: object;
      outputSchema?: object;
      annotations?: object;
    }>;
    nextCursor?: string;
  }>;
  callTool(
    params: { name: string; arguments?: Record<string, unknown> },
    resultSchema?: undefined,
    options?: { signal?: AbortSignal; timeout?: number },
  ): Promise<object>;
  getServerVersion(): { name: string } | undefined;
}

/** Facts about one MCP request the server's handler receives. */
export interface McpRequestExtra {
  sessionId?: string;
  signal: AbortSignal;
}

/** What `serveMcp` needs of (and returns as) an `McpServer` from `@modelcontextprotocol/sdk/server/mcp.js`. */
export interface McpServerLike {
  registerTool(name: string, config: Record<string, unknown>, callback: never): unknown;
  readonly server: {
    setRequestHandler(
      schema: never,
      handler: (
        request: {
          params: {
            name: string;
            arguments?: Record<string, unknown>;
            _meta?: Record<string, unknown>;
          };
        },
        extra: McpRequestExtra,
      ) => Promise<unknown>,
    ): void;
  };
  connect(transport: unknown): Promise<void>;
}
