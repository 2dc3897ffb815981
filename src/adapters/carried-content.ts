import type { SecretScrubber } from '../audit/secret-scrubber.js';
import { VeridexError } from '../errors/index.js';
import { type SanitizerFinding, sanitizeOutput } from '../tools/sanitize-output.js';
import type { PortableContent } from './portable-message.js';

/** What the import does with a content part the sanitiser cannot read (images, binary files). */
export type UnsanitisableParts = 'refuse' | 'drop';

/** Where a carried text sits, for the refusal message. */
export interface CarriedPlace {
  messageIndex: number;
  role: string;
}

// A run file's messages are bounded by the file itself; the sanitiser must not cut them.
const NO_CAP = Number.MAX_SAFE_INTEGER;
// Deeper parts than any provider's block shape are refused, not walked (nor left unsanitised).
const MAX_PART_DEPTH = 16;
const MAX_ARGUMENT_DEPTH = 64;

type Part = Record<string, unknown>;
const isPart = (value: unknown): value is Part =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The part types whose every field a provider renders is a string, so that sanitising every
 * string of the part covers all the model reads. Anything else — images, audio, video, base64
 * or URL documents and files, Anthropic's `redacted_thinking`, OpenAI's encrypted reasoning,
 * types this table does not know — carries content the text sanitiser cannot see.
 */
const TEXT_PARTS: Readonly<Record<string, (part: Part, depth: number) => boolean>> = {
  text: () => true,
  input_text: () => true, // OpenAI Responses
  output_text: () => true,
  thinking: () => true, // Anthropic (its signature breaks if the text changes: fails closed)
  tool_use: () => true, // Anthropic's mirror of a tool call
  tool_call: () => true, // LangChain's standard block
  reasoning: (part) => !('encrypted_content' in part),
  // LangChain standard blocks: plain text given inline, not as data, URL or file id.
  'text-plain': (part) =>
    typeof part.text === 'string' && !('data' in part || 'url' in part || 'fileId' in part),
  file: (part) => part.source_type === 'text' && !('data' in part || 'url' in part),
  // Anthropic documents: an inline text source, or a content source of sanitisable blocks.
  document: (part, depth) => {
    const source = part.source;
    if (!isPart(source)) return false;
    if (source.type === 'text') return true;
    return (
      source.type === 'content' &&
      Array.isArray(source.content) &&
      source.content.every((inner) => isPart(inner) && isTextPart(inner, depth + 1))
    );
  },
};

function isTextPart(part: Part, depth: number): boolean {
  if (depth > MAX_PART_DEPTH || typeof part.type !== 'string') return false;
  const check = Object.hasOwn(TEXT_PARTS, part.type) ? TEXT_PARTS[part.type] : undefined;
  return check?.(part, depth) === true && withinDepth(part, depth);
}

function withinDepth(value: unknown, depth: number, limit = MAX_PART_DEPTH): boolean {
  if (depth > limit) return false;
  if (Array.isArray(value)) return value.every((item) => withinDepth(item, depth + 1, limit));
  if (isPart(value)) {
    return Object.values(value).every((item) => withinDepth(item, depth + 1, limit));
  }
  return true;
}

/** Sanitises one carried text as a fresh tool result would be (uncapped), noting findings. */
export function sanitizeCarriedText(
  text: string,
  scrubber: SecretScrubber | undefined,
  findings: SanitizerFinding[],
): string {
  const result = sanitizeOutput(text, { maxBytes: NO_CAP, ...(scrubber ? { scrubber } : {}) });
  findings.push(...result.findings);
  return result.content;
}

/**
 * The arguments of a tool call the run already answered (the model reads them as history):
 * every string, keys included, through the sanitiser.
 * @throws VeridexError `import_invalid` for arguments nested deeper than 64 levels.
 */
export function sanitizeCarriedArguments(
  args: Record<string, unknown>,
  place: CarriedPlace,
  scrubber: SecretScrubber | undefined,
  findings: SanitizerFinding[],
): Record<string, unknown> {
  if (!withinDepth(args, 0, MAX_ARGUMENT_DEPTH)) {
    throw new VeridexError(
      'import_invalid',
      `Message ${place.messageIndex} (${place.role}) of the run carries tool-call arguments nested deeper than ${MAX_ARGUMENT_DEPTH} levels; refusing them.`,
      { details: { ...place } },
    );
  }
  return sanitizeDeep(args, scrubber, findings) as Record<string, unknown>;
}

// Every string of the value, keys included, through the sanitiser (depth checked beforehand).
function sanitizeDeep(
  value: unknown,
  scrubber: SecretScrubber | undefined,
  findings: SanitizerFinding[],
): unknown {
  if (typeof value === 'string') return sanitizeCarriedText(value, scrubber, findings);
  if (Array.isArray(value)) return value.map((item) => sanitizeDeep(item, scrubber, findings));
  if (!isPart(value)) return value;
  const result: Part = {};
  for (const [key, item] of Object.entries(value)) {
    result[sanitizeCarriedText(key, scrubber, findings)] = sanitizeDeep(item, scrubber, findings);
  }
  return result;
}

function removedPart(type: unknown): Part {
  const named = typeof type === 'string' && /^[A-Za-z_-]{1,32}$/.test(type) ? `${type} ` : '';
  return {
    type: 'text',
    text: `[${named}part removed on import: the sanitiser cannot read its content]`,
  };
}

/**
 * A carried message's content with every string a model provider would render passed through
 * `sanitizeOutput`: plain text, and every string field (keys included, at any depth) of each
 * content part whose type holds only text (see `TEXT_PARTS`). A part of any other type is
 * refused (`import_invalid`, naming the message and the type) or, with `'drop'`, replaced by a
 * visible text part saying it was removed.
 *
 * @throws VeridexError `import_invalid` for a part the sanitiser cannot read, unless `'drop'`.
 */
export function sanitizeCarriedContent(
  content: PortableContent,
  place: CarriedPlace,
  options: {
    scrubber: SecretScrubber | undefined;
    unsanitisable: UnsanitisableParts;
    findings: SanitizerFinding[];
  },
): PortableContent {
  const { scrubber, findings } = options;
  if (typeof content === 'string') return sanitizeCarriedText(content, scrubber, findings);
  return content.map((part, partIndex) => {
    if (isPart(part) && isTextPart(part, 0)) return sanitizeDeep(part, scrubber, findings) as Part;
    if (options.unsanitisable === 'drop') return removedPart(part?.type);
    const partType = typeof part?.type === 'string' ? part.type.slice(0, 40) : null;
    const type = JSON.stringify(partType);
    throw new VeridexError(
      'import_invalid',
      `Message ${place.messageIndex} (${place.role}) of the run carries a content part of type ${type} that the output sanitiser cannot read (images, audio, binary or URL documents, encrypted reasoning, unknown types); expected text parts. Import with unsanitisableParts: 'drop' (--drop-unsanitisable-parts) to replace such parts with a notice.`,
      { details: { ...place, partIndex, partType } },
    );
  });
}
