export {
  DEFAULT_TRACE_FIELDS,
  type GoldenTrace,
  type RecordTraceOptions,
  recordTrace,
  renderStep,
  TRACE_FORMAT,
  type TraceStep,
  type TraceValue,
  traceValueMatches,
} from './golden-trace.js';
export {
  ScriptedChatModel,
  type ScriptedModelOptions,
  type ScriptedToolCall,
  type ScriptedTurn,
  scriptedModel,
} from './scripted-model.js';
export { type MatchTraceOptions, toMatchTrace, traceMatchers } from './to-match-trace.js';
