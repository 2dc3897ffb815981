export {
  type FromLangChainToolOptions,
  fromLangChainTool,
} from './from-langchain-tool.js';
export {
  type FromMcpClientOptions,
  fromMcpClient,
  type McpToolInfo,
} from './from-mcp-client.js';
export {
  IMPORTED_DESCRIPTION_LIMIT,
  importJsonSchema,
  normalizeToolName,
} from './imported-metadata.js';
export {
  type FromOpenAIFunctionOptions,
  fromOpenAIFunction,
  type OpenAIFunctionDefinition,
  type OpenAITool,
  toOpenAIFunction,
} from './openai-function.js';
export {
  fromPortableMessage,
  type PortableContent,
  type PortableMessage,
  type PortableToolCall,
  toPortableMessage,
} from './portable-message.js';
export {
  type ExportThreadOptions,
  exportThread,
  type ImportThreadOptions,
  importThread,
  PORTABLE_RUN_FORMAT,
  type PortableRun,
  type ThreadGraph,
} from './portable-run.js';
export { type ServeMcpOptions, serveMcp } from './serve-mcp.js';
export {
  GovernedStructuredTool,
  type GovernedToolRuntime,
  toLangChainTool,
} from './to-langchain-tool.js';
