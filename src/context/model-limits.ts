import { VeridexError } from '../errors/index.js';

/** The BPE encodings the token counter knows (both from `gpt-tokenizer`, offline). */
export type TokenEncoding = 'o200k_base' | 'cl100k_base';

/**
 * Context-window sizes (input + output tokens) of models people run LangGraph agents on.
 * Keys are matched as the longest prefix of the normalised model name, so dated snapshots
 * (`gpt-4o-2024-08-06`), size suffixes (`llama-3.1-70b-instruct`) and Ollama tags
 * (`llama3.1:8b`) resolve to their family. Sources, checked when this table was written:
 * - OpenAI: platform.openai.com/docs/models (the same numbers ship in `gpt-tokenizer`'s model
 *   catalog): gpt-4o 128,000; gpt-4.1 1,047,576; o1/o3/o4-mini 200,000; gpt-5 400,000.
 * - Anthropic: docs.anthropic.com "Models overview": 200,000 for every Claude 3/3.5/3.7/4
 *   model (Sonnet's 1M window is an opt-in beta, not assumed here).
 * - Meta: the Llama 3.1/3.2/3.3 model cards (128K); Llama 3 (8,192); Llama 4 Scout 10M and
 *   Maverick 1M.
 * - Mistral: docs.mistral.ai "Models" (large/medium/small 3.1+/nemo/ministral 128K = 131,072;
 *   codestral 256K; 7B and Mixtral 8x7B 32K; Mixtral 8x22B 64K).
 * - Google: ai.google.dev Gemini models (1.5 Pro 2,097,152; Flash and 2.x 1,048,576).
 * Anything else needs `contextLimit`.
 */
export const KNOWN_CONTEXT_LIMITS: Readonly<Record<string, number>> = {
  // OpenAI
  'gpt-5': 400_000,
  'gpt-4.1': 1_047_576,
  'gpt-4.5': 128_000,
  'gpt-4o': 128_000,
  'chatgpt-4o': 128_000,
  'gpt-4-turbo': 128_000,
  'gpt-4-1106': 128_000,
  'gpt-4-0125': 128_000,
  'gpt-4-32k': 32_768,
  'gpt-4': 8_192,
  'gpt-3.5-turbo-instruct': 4_096,
  'gpt-3.5-turbo': 16_385,
  'gpt-oss': 131_072,
  o1: 200_000,
  'o1-mini': 128_000,
  'o1-preview': 128_000,
  o3: 200_000,
  o4: 200_000,
  // Anthropic
  claude: 200_000,
  'claude-2.0': 100_000,
  'claude-instant': 100_000,
  // Meta
  'llama-3': 8_192,
  'llama-3.1': 128_000,
  'llama-3.2': 128_000,
  'llama-3.3': 128_000,
  'llama-4-scout': 10_000_000,
  'llama-4-maverick': 1_000_000,
  // Mistral
  'mistral-large': 131_072,
  'mistral-medium': 131_072,
  'mistral-small': 131_072,
  'mistral-nemo': 131_072,
  'open-mistral-nemo': 131_072,
  ministral: 131_072,
  'pixtral-large': 131_072,
  codestral: 262_144,
  'mistral-7b': 32_768,
  'open-mistral-7b': 32_768,
  'mixtral-8x7b': 32_768,
  'open-mixtral-8x7b': 32_768,
  'mixtral-8x22b': 65_536,
  'open-mixtral-8x22b': 65_536,
  // Google
  'gemini-1.5-pro': 2_097_152,
  'gemini-1.5-flash': 1_048_576,
  'gemini-2': 1_048_576,
};

/**
 * Lower-cases a model name and strips provider prefixes (`openai:gpt-4o`,
 * `meta-llama/Llama-3.1-8B`, `anthropic.claude-3-5-sonnet`), and spells Ollama's `llama3.1`
 * as `llama-3.1`, so one table serves every client's naming.
 */
export function normaliseModelName(model: string): string {
  let name = model.trim().toLowerCase();
  name = name.slice(name.lastIndexOf('/') + 1);
  const colon = name.indexOf(':');
  if (colon !== -1) {
    // `provider:model` (LangChain's initChatModel) or `model:tag` (Ollama, Bedrock versions).
    const head = name.slice(0, colon);
    name = PROVIDER_PREFIX.test(head) ? name.slice(colon + 1) : head;
    if (name.includes(':')) name = name.slice(0, name.indexOf(':'));
  }
  name = name.replace(/^(?:(?:us|eu|apac|anthropic|meta|mistral|openai|google)\.)+/, '');
  return name.replace(/^meta-/, '').replace(/^llama(\d)/, 'llama-$1');
}

const PROVIDER_PREFIX =
  /^(?:openai|azure_openai|anthropic|ollama|groq|mistral|mistralai|google|google-genai|google-vertexai|bedrock|together|fireworks|meta)$/;

/** The known context limit of `model` (longest matching prefix), or undefined. */
export function knownContextLimit(model: string): number | undefined {
  const name = normaliseModelName(model);
  let best: string | undefined;
  for (const key of Object.keys(KNOWN_CONTEXT_LIMITS)) {
    if (isPrefixAtBoundary(name, key) && (best === undefined || key.length > best.length)) {
      best = key;
    }
  }
  return best === undefined ? undefined : KNOWN_CONTEXT_LIMITS[best];
}

// `o1` must match `o1-2024-12-17` but not `o10`; `gpt-4` must match `gpt-4-0613` but also
// be outranked by `gpt-4o`, which the longest-prefix rule does.
function isPrefixAtBoundary(name: string, key: string): boolean {
  if (!name.startsWith(key)) return false;
  if (name.length === key.length) return true;
  const next = name[key.length]!;
  return /[-._\s]/.test(next) || /[a-z]/.test(next) !== /[a-z]/.test(key.at(-1)!);
}

/**
 * The context limit of `model`: the override when given, else the table.
 * @throws VeridexError `config_invalid` for an unknown model without an override.
 */
export function contextLimitFor(model: string, override?: number): number {
  if (override !== undefined) {
    if (!Number.isInteger(override) || override <= 0) {
      throw new VeridexError(
        'config_invalid',
        `contextLimit must be a positive integer number of tokens; got ${override}.`,
      );
    }
    return override;
  }
  const limit = knownContextLimit(model);
  if (limit === undefined) {
    throw new VeridexError(
      'config_invalid',
      `The context window of model "${model}" is not known. Pass contextLimit (the model's context window in tokens) to the ContextCompiler.`,
      { details: { model } },
    );
  }
  return limit;
}

/**
 * The encoding used to count tokens for `model`: `o200k_base` for gpt-4o, gpt-4.1, gpt-4.5,
 * gpt-5, gpt-oss and the o-series; `cl100k_base` for gpt-4, gpt-4-turbo and gpt-3.5. Every
 * other model (Claude, Llama, Mistral, Gemini) has its own tokenizer that is not available
 * offline; it is approximated with `o200k_base` and reported as approximate.
 */
export function encodingFor(model: string): { encoding: TokenEncoding; approximate: boolean } {
  const name = normaliseModelName(model);
  if (/^(?:gpt-4o|chatgpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|gpt-oss|o\d)/.test(name)) {
    return { encoding: 'o200k_base', approximate: false };
  }
  if (/^(?:gpt-4|gpt-3\.5)/.test(name)) return { encoding: 'cl100k_base', approximate: false };
  return { encoding: 'o200k_base', approximate: true };
}
