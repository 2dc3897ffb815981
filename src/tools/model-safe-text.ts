import type { SecretScrubber } from '../audit/secret-scrubber.js';
import { sanitizeOutput } from './sanitize-output.js';

/** The most a library-written message to the model may hold (UTF-8 bytes). */
export const MAX_MODEL_MESSAGE_BYTES = 2048;

/**
 * Text the library itself writes for the model — error messages, policy reasons, approval
 * outcomes (an approver's name and reason), summaries — made as safe as tool output: secrets
 * scrubbed, credentials redacted, role tokens and hidden characters neutralised, capped.
 * A policy rule's exception message or an approver's reason is as untrusted as a tool's output.
 */
export function modelSafeText(
  text: string,
  scrubber: SecretScrubber | undefined,
  maxBytes = MAX_MODEL_MESSAGE_BYTES,
): string {
  return sanitizeOutput(text, { maxBytes, ...(scrubber ? { scrubber } : {}) }).content;
}
