import { type ArgumentThresholdOptions, argumentThreshold } from './argument-threshold.js';
import { type CallLimitOptions, callLimit, type ToolCost } from './call-limit.js';
import { policyPack } from './policy-pack.js';
import { type RateLimitOptions, rateLimit } from './rate-limit.js';
import { type RequireApprovalOptions, requireApproval } from './require-approval.js';
import { allowTools, denyTools, onlyTools, type ToolListOptions } from './tool-lists.js';

/** The built-in policy rules. */
export const rules = {
  allowTools,
  denyTools,
  onlyTools,
  requireApproval,
  argumentThreshold,
  callLimit,
  rateLimit,
  policyPack,
};

export { compareDecimal } from './decimal.js';
export type {
  ArgumentThresholdOptions,
  CallLimitOptions,
  RateLimitOptions,
  RequireApprovalOptions,
  ToolCost,
  ToolListOptions,
};
