export {
  ApprovalsApiError,
  type ApprovalsClient,
  type ApprovalsClientOptions,
  createApprovalsClient,
} from './approvals-client.js';
export { ApprovalsProvider, useApprovalsClient } from './approvals-provider.js';
export { readServerSentEvents, type ServerSentEvent } from './sse-reader.js';
export { type UseApprovals, useApprovals } from './use-approvals.js';
export { useRun } from './use-run.js';
export { useTrace } from './use-trace.js';
