export {
  type FromOpenAIAgentsToolOptions,
  fromOpenAIAgentsTool,
} from './from-openai-agents-tool.js';
export { type OpenAIAgentsToolOptions, toOpenAIAgentsTool } from './to-openai-agents-tool.js';
