import type { SecretScrubber } from '../audit/secret-scrubber.js';
import { sanitizeOutput } from '../tools/sanitize-output.js';
import type { PortableContent, PortableMessage } from './portable-message.js';

// A run file's tool results are bounded by the file itself; the sanitiser must not cut them.
const NO_CAP = Number.MAX_SAFE_INTEGER;

/**
 * A tool message from an imported `veridex.run/v1` file, made as safe as a fresh tool result:
 * its text (plain, or the `text` of each content part) passes `sanitizeOutput` — role tokens
 * (`<|im_start|>`, `[INST]`, fake turn headers), zero-width and bidi characters, terminal
 * escapes, credentials and registered secrets neutralised. A result our own tool node wrote
 * was sanitised already and comes back unchanged (the sanitiser is idempotent); one a hostile
 * file planted does not reach the model verbatim. Other roles are returned as they are.
 */
export function sanitizeCarriedMessage(
  message: PortableMessage,
  scrubber: SecretScrubber | undefined,
): PortableMessage {
  if (message.role !== 'tool') return message;
  return { ...message, content: sanitizeContent(message.content, scrubber) };
}

function sanitizeContent(
  content: PortableContent,
  scrubber: SecretScrubber | undefined,
): PortableContent {
  const clean = (text: string) =>
    sanitizeOutput(text, { maxBytes: NO_CAP, ...(scrubber ? { scrubber } : {}) }).content;
  if (typeof content === 'string') return clean(content);
  return content.map((part) =>
    typeof part.text === 'string' ? { ...part, text: clean(part.text) } : part,
  );
}
