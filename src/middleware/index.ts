export {
  type GovernanceMiddleware,
  type GovernanceMiddlewareOptions,
  governanceMiddleware,
} from './governance-middleware.js';
export type { MiddlewareEvidenceOptions, MiddlewareMemoryOptions } from './model-hooks.js';
