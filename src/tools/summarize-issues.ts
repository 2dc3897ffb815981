import type { z } from 'zod';

/**
 * A short, model-readable summary of zod issues: `path: message` for the first `limit`
 * issues, e.g. `to: Invalid email address; subject: Too big: expected string to have <=200 characters`.
 * Values the caller sent are not echoed back.
 */
export function summarizeIssues(issues: readonly z.core.$ZodIssue[], limit = 8): string {
  const parts = issues.slice(0, limit).map((issue) => {
    const path = issue.path.length === 0 ? '(root)' : issue.path.map(String).join('.');
    return `${path}: ${issue.message}`;
  });
  if (issues.length > limit) parts.push(`and ${issues.length - limit} more`);
  return parts.join('; ');
}
