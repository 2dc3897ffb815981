import { createRequire } from 'node:module';
import type { TokenEncoding } from './model-limits.js';

/**
 * What the context compiler needs from a tokenizer: exact counts, and encode/decode so that
 * oversize tool outputs can be cut on token boundaries. Bring your own (e.g. a model's
 * native tokenizer) by implementing this; the default is `gpt-tokenizer`.
 */
export interface Tokenizer {
  /** A stable name, e.g. `o200k_base`; part of cache keys. */
  readonly encoding: string;
  /** Tokens in `text`. Special-token markers such as `<|endoftext|>` count as plain text. */
  count(text: string): number;
  encode(text: string): number[];
  decode(tokens: readonly number[]): string;
}

interface GptTokenizerEncoding {
  countTokens(text: string, options: object): number;
  encode(text: string, options: object): number[];
  decode(tokens: Iterable<number>): string;
}

// Loaded on first use through require: each BPE table costs 150–550 ms to load, and most
// processes need only one of them.
const require = createRequire(import.meta.url);
const loaded = new Map<TokenEncoding, Tokenizer>();

// Text from users, tools and models is untrusted: a literal `<|endoftext|>` in it must be
// counted as the characters it is, never rejected or treated as a control token.
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

/**
 * The `gpt-tokenizer` tokenizer for `encoding`, loaded once per process.
 *
 * @example tokenizerFor('o200k_base').count('Hello, world!') // 4
 */
export function tokenizerFor(encoding: TokenEncoding): Tokenizer {
  let tokenizer = loaded.get(encoding);
  if (!tokenizer) {
    const module = require(`gpt-tokenizer/encoding/${encoding}`) as GptTokenizerEncoding;
    tokenizer = {
      encoding,
      count: (text) => (text.length === 0 ? 0 : module.countTokens(text, PLAIN_TEXT)),
      encode: (text) => module.encode(text, PLAIN_TEXT),
      decode: (tokens) => module.decode(tokens),
    };
    loaded.set(encoding, tokenizer);
  }
  return tokenizer;
}
