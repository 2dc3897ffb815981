export type { UnsanitisableParts } from './carried-content.js';
export { checkpointReader } from './checkpoint-reader.js';
export { type ExportThreadOptions, exportThread } from './export-thread.js';
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
  type FromOpenAPIOptions,
  fromOpenAPI,
  MAX_OPENAPI_FILE_BYTES,
  MAX_OPENAPI_NODES,
  type OpenAPIOperationOverride,
} from './from-openapi.js';
export {
  HOST_INVOKE,
  type HostedRuntime,
  type HostLangChainToolOptions,
  hostLangChainTool,
} from './hosted-langchain-tool.js';
export type { ImportedApproval } from './import-approvals.js';
export {
  type ImportThreadOptions,
  type ImportThreadResult,
  importThread,
} from './import-thread.js';
export {
  IMPORTED_DESCRIPTION_LIMIT,
  importJsonSchema,
  normalizeToolName,
} from './imported-metadata.js';
export type { McpClientLike, McpRequestExtra, McpServerLike } from './mcp-types.js';
export {
  type FromOpenAIFunctionOptions,
  fromOpenAIFunction,
  type OpenAIFunctionDefinition,
  type OpenAITool,
  toOpenAIFunction,
} from './openai-function.js';
export { AUTO_SAFETY_CLASSES, type HttpMethod } from './openapi-operation.js';
export { type OpenAPIAuth, pathSegment } from './openapi-request.js';
export {
  fromPortableMessage,
  type PortableContent,
  type PortableMessage,
  type PortableToolCall,
  toPortableMessage,
} from './portable-message.js';
export {
  PORTABLE_RUN_FORMAT,
  type PortableApproval,
  type PortableAudit,
  type PortableMemoryDelta,
  type PortableMemoryInvalidation,
  type PortableMemoryWrite,
  type PortableRun,
  type ThreadGraph,
} from './portable-run.js';
export { governedNodesOf, type RunGovernance, runGovernanceOf } from './run-governance.js';
export { parsePortableRun, RUN_SCHEMA_URL, runSchema } from './run-schema.js';
export type { CarriedMessageFindings } from './sanitize-carried-message.js';
export { type ServeMcpOptions, serveMcp } from './serve-mcp.js';
export {
  GovernedStructuredTool,
  type GovernedToolRuntime,
  toLangChainTool,
} from './to-langchain-tool.js';
