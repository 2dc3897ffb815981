export {
  ScriptedChatModel,
  type ScriptedModelOptions,
  type ScriptedToolCall,
  type ScriptedTurn,
  scriptedModel,
} from './scripted-model.js';
