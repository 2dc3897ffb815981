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
