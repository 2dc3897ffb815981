export {
  type AllowlistedHttpOptions,
  createAllowlistedHttpClient,
} from './allowlisted-http-client.js';
export { DenyAllSandbox } from './deny-all-sandbox.js';
export { hostMatches, validateHostPattern } from './host-pattern.js';
export { InProcessSandbox, type InProcessSandboxOptions } from './in-process-sandbox.js';
export {
  IsolatedProcessSandbox,
  type IsolatedProcessSandboxOptions,
} from './isolated-process-sandbox.js';
export { createJailedFs, deniedFs } from './jailed-fs.js';
export { LocalProcessSandbox, type LocalProcessSandboxOptions } from './local-process-sandbox.js';
export { isPrivateAddress } from './private-address.js';
export type { ProcessSandboxOptions } from './process-sandbox-options.js';
export { safeResolve, safeResolveSync } from './safe-resolve.js';
export type { Sandbox, SandboxRunRequest, SandboxViolation } from './sandbox.js';
