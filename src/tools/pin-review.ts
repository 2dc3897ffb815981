import type { z } from 'zod';
import type { AuditLog } from '../audit/audit-log.js';
import { deriveEventId } from '../audit/trace-event.js';
import type { PinStore } from './pin-store.js';
import { createGovernedTool } from './tool.js';
import type { AnyGovernedTool, ToolDefinition } from './types.js';

/**
 * The pin-store entry recording that a reviewer accepted a held tool at a given hash (the
 * `:` keeps it apart from every tool name). It lives beside the tool's own pin, in the lock
 * file or the database, so the review survives restarts and a changed tool needs a new one.
 */
export function reviewPinName(toolName: string): string {
  return `review:${toolName}`;
}

/** Options for {@link settleReviews}. */
export interface SettleReviewsOptions {
  store?: PinStore | undefined;
  /**
   * Held tools the reviewer releases now, having read their findings (the import's
   * `acceptReview`). Re-pinning a changed tool (`accept`) never releases a hold.
   */
  acceptReview?: readonly string[] | undefined;
  audit?: AuditLog | undefined;
  auditThreadId?: string;
  /** Where the tools came from (`mcp:server`, `openapi:title`). */
  source?: string;
}

/**
 * Decides each held tool (`review` set by an importer): released when its name is in
 * `acceptReview` (the review is then recorded in `store`) or `store` records a review of its
 * current hash; held otherwise. Every held or released tool with findings writes a
 * `security_event` (`tool_poisoning_detected`, kinds only). Run after `checkPins`, whose
 * `schema_pin_mismatch` names the findings of a changed tool, so a hold is released only by an
 * acceptance of its own, given after they were reported.
 */
export async function settleReviews(
  tools: readonly AnyGovernedTool[],
  options: SettleReviewsOptions = {},
): Promise<AnyGovernedTool[]> {
  const threadId = options.auditThreadId ?? 'veridex:tools';
  const settled: AnyGovernedTool[] = [];
  for (const tool of tools) {
    if (!tool.review) {
      settled.push(tool);
      continue;
    }
    const accepted = options.acceptReview?.includes(tool.name) === true;
    if (accepted && options.store) {
      await options.store.set({
        name: reviewPinName(tool.name),
        schemaHash: tool.schemaHash,
        pinnedAt: new Date().toISOString(),
        ...(options.source ? { source: options.source } : {}),
      });
    }
    const reviewed =
      accepted ||
      (await options.store?.get(reviewPinName(tool.name)))?.schemaHash === tool.schemaHash;
    await options.audit?.append({
      threadId,
      type: 'security_event',
      eventId: deriveEventId(
        threadId,
        'security_event',
        'tool_poisoning_detected',
        tool.name,
        tool.schemaHash,
        reviewed ? 'reviewed' : 'held',
      ),
      payload: {
        reason: 'tool_poisoning_detected',
        toolName: tool.name,
        findings: [...tool.review.reasons],
        held: !reviewed,
        source: options.source ?? null,
      },
    });
    settled.push(reviewed ? released(tool) : tool);
  }
  return settled;
}

// The same contract (same hash) without the hold.
function released(tool: AnyGovernedTool): AnyGovernedTool {
  return createGovernedTool(tool as unknown as ToolDefinition<z.ZodType, z.ZodType>, tool.trust);
}
