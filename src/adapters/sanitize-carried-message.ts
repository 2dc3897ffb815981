import type { SecretScrubber } from '../audit/secret-scrubber.js';
import { mergeFindings, type SanitizerFinding } from '../tools/sanitize-output.js';
import {
  sanitizeCarriedArguments,
  sanitizeCarriedContent,
  sanitizeCarriedText,
  type UnsanitisableParts,
} from './carried-content.js';
import type { PortableMessage } from './portable-message.js';

/** What the sanitiser changed in one carried message (kinds and counts, never the text). */
export interface CarriedMessageFindings {
  /** Position of the message in the run's `messages`. */
  messageIndex: number;
  role: PortableMessage['role'];
  findings: SanitizerFinding[];
}

/** Options for {@link sanitizeCarriedMessages}. */
export interface SanitizeCarriedOptions {
  /** Registered secrets to scrub as well. */
  scrubber?: SecretScrubber | undefined;
  /** A content part the sanitiser cannot read: refuse the import (default) or drop the part. */
  unsanitisableParts?: UnsanitisableParts;
}

/**
 * The messages of an imported `veridex.run/v1` file, made as safe as a fresh tool result:
 * every message, whatever its role — system, user, assistant, tool — passes `sanitizeOutput`
 * (role tokens such as `<|im_start|>`, `[INST]` and fake turn headers neutralised; zero-width,
 * bidi and other hidden characters, terminal escapes, credentials and registered secrets
 * removed), in every content shape (see `sanitizeCarriedContent`), with its `name` and the
 * arguments of the tool calls the file already answered. Messages our own graph wrote come
 * back unchanged (the sanitiser is idempotent on clean text); a file that planted such text
 * does not reach the model verbatim, and the findings say where it was.
 *
 * The arguments of calls still waiting for their result are kept as written: they are the
 * proposal the target's policy and approvals judge, and sanitising them would change it.
 *
 * @throws VeridexError `import_invalid` for a content part the sanitiser cannot read (unless
 *   `unsanitisableParts: 'drop'`) or arguments nested too deep.
 */
export function sanitizeCarriedMessages(
  messages: readonly PortableMessage[],
  options: SanitizeCarriedOptions = {},
): { messages: PortableMessage[]; findings: CarriedMessageFindings[] } {
  const { scrubber } = options;
  const unsanitisable = options.unsanitisableParts ?? 'refuse';
  const answered = new Set(
    messages.flatMap((message) => (message.role === 'tool' ? [message.toolCallId] : [])),
  );
  const reports: CarriedMessageFindings[] = [];
  const clean = messages.map((message, messageIndex): PortableMessage => {
    const place = { messageIndex, role: message.role };
    const findings: SanitizerFinding[] = [];
    const content = sanitizeCarriedContent(message.content, place, {
      scrubber,
      unsanitisable,
      findings,
    });
    const result = { ...message, content } as PortableMessage & { name?: string };
    if ('name' in message && typeof message.name === 'string') {
      result.name = sanitizeCarriedText(message.name, scrubber, findings);
    }
    if (message.role === 'assistant' && message.toolCalls && result.role === 'assistant') {
      result.toolCalls = message.toolCalls.map((call) =>
        answered.has(call.id)
          ? {
              ...call,
              arguments: sanitizeCarriedArguments(call.arguments, place, scrubber, findings),
            }
          : call,
      );
    }
    if (findings.length > 0) reports.push({ ...place, findings: mergeFindings(findings) });
    return result;
  });
  return { messages: clean, findings: reports };
}
