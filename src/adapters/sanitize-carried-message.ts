import type { SecretScrubber } from '../audit/secret-scrubber.js';
import { VeridexError } from '../errors/index.js';
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
 * The arguments of calls still waiting for their result — unanswered calls of the last
 * assistant message, the only ones a tool node can still run — are kept as written: they are
 * the proposal the target's policy and approvals judge, and sanitising them would change it.
 * An unanswered call anywhere earlier waits on nothing: its arguments are sanitised.
 *
 * A tool call's `name` and `id` and a tool message's `toolCallId` are shown to the model too
 * (providers render them; chat templates print them), but they are not rewritten: a changed id
 * would no longer pair a call with its answer or its pending approval, and a changed name
 * would change the proposal. A file whose identifiers are not plain is refused instead (see
 * {@link assertPlainIdentifiers}).
 *
 * @throws VeridexError `import_invalid` for a content part the sanitiser cannot read (unless
 *   `unsanitisableParts: 'drop'`), arguments nested too deep, or a tool call name or id that
 *   is not a plain identifier.
 */
export function sanitizeCarriedMessages(
  messages: readonly PortableMessage[],
  options: SanitizeCarriedOptions = {},
): { messages: PortableMessage[]; findings: CarriedMessageFindings[] } {
  const { scrubber } = options;
  assertPlainIdentifiers(messages, scrubber);
  const unsanitisable = options.unsanitisableParts ?? 'refuse';
  const answered = new Set(
    messages.flatMap((message) => (message.role === 'tool' ? [message.toolCallId] : [])),
  );
  // Only the last assistant message's calls can still be run (a tool node runs the calls of the
  // turn it follows); an unanswered call anywhere else waits on nothing, and is history.
  const lastAssistant = messages.findLastIndex((message) => message.role === 'assistant');
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
        answered.has(call.id) || messageIndex !== lastAssistant
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

/** A tool name as models call tools: letters, digits, `_`, `-`, and `.` or `:` for namespaces. */
const CALL_NAME = /^[A-Za-z0-9_.:-]{1,128}$/;
/** A tool call id as providers mint them: printable ASCII without blanks (empty when absent). */
const CALL_ID = /^[\x21-\x7e]{0,256}$/;

/**
 * Refuses a run file in which a tool call's `name` or `id`, or a tool message's `toolCallId`,
 * is not a plain identifier: a name must match {@link CALL_NAME}, an id {@link CALL_ID}, and
 * either must come out of the output sanitiser unchanged (no role token such as
 * `<|im_start|>` or `[INST]`, no credential or registered secret). What every provider mints
 * passes; text addressed to the model does not.
 *
 * @throws VeridexError `import_invalid`, naming the message and the field, never the value.
 */
export function assertPlainIdentifiers(
  messages: readonly PortableMessage[],
  scrubber: SecretScrubber | undefined,
): void {
  const check = (value: string, pattern: RegExp, messageIndex: number, what: string) => {
    if (pattern.test(value) && sanitizeCarriedText(value, scrubber, []) === value) return;
    const expected =
      pattern === CALL_NAME
        ? 'letters, digits, _ - . : (1 to 128 characters)'
        : 'printable ASCII without blanks (at most 256 characters)';
    throw new VeridexError(
      'import_invalid',
      `Run message ${messageIndex} (${messages[messageIndex]!.role}): ${what} is not a plain identifier: expected ${expected} that the output sanitiser leaves unchanged; got ${value.length} characters that are not (not shown). A run file cannot carry other text to the model in a tool call's name or id: the import is refused, nothing was written.`,
      { details: { messageIndex, field: what } },
    );
  };
  messages.forEach((message, messageIndex) => {
    if (message.role === 'tool') check(message.toolCallId, CALL_ID, messageIndex, 'toolCallId');
    if (message.role !== 'assistant') return;
    (message.toolCalls ?? []).forEach((call, callIndex) => {
      check(call.name, CALL_NAME, messageIndex, `the name of tool call ${callIndex}`);
      check(call.id, CALL_ID, messageIndex, `the id of tool call ${callIndex}`);
    });
  });
}
