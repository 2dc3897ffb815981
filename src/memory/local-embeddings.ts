import { Embeddings } from '@langchain/core/embeddings';
import { VeridexError } from '../errors/index.js';

/** Options for {@link LocalEmbeddings}. */
export interface LocalEmbeddingsOptions {
  /** Vector length. Default 256. */
  dimensions?: number;
}

// Words that carry no topic: dropping them keeps "what is the port" close to "port".
const STOPWORDS = new Set(
  (
    'a an and are as at be been being but by can could did do does doing for from had has have ' +
    'he her hers him his how i if in into is it its me my of on or our ours she so than that the ' +
    'their them then there these they this those to us was we were what when where which who whom ' +
    'why will with would you your yours'
  ).split(' '),
);

const WORD = /[\p{L}\p{N}]+/gu;
const WORD_WEIGHT = 1;
const TRIGRAM_WEIGHT = 0.3;

/**
 * The offline default embedder: deterministic, dependency-free and fast (~10 µs per sentence),
 * but **lexical-grade** — it knows spelling, not meaning. Each content word contributes its
 * light stem and its character trigrams, feature-hashed with a sign bit into a fixed number of
 * dimensions and L2-normalised. So "payments"/"payment" and "colour"/"color" land close,
 * while "car"/"automobile" do not. Swap in any `@langchain/core` `Embeddings` (e.g.
 * `OpenAIEmbeddings`) for semantic recall.
 *
 * @throws VeridexError `config_invalid` for dimensions outside 8–4096.
 * @example
 * const embeddings = new LocalEmbeddings({ dimensions: 256 });
 * const [vector] = await embeddings.embedDocuments(['Alice prefers dark mode']);
 */
export class LocalEmbeddings extends Embeddings {
  readonly dimensions: number;

  constructor(options: LocalEmbeddingsOptions = {}) {
    super({});
    const dimensions = options.dimensions ?? 256;
    if (!Number.isInteger(dimensions) || dimensions < 8 || dimensions > 4096) {
      throw new VeridexError(
        'config_invalid',
        `LocalEmbeddings dimensions must be an integer from 8 to 4096; got ${dimensions}.`,
      );
    }
    this.dimensions = dimensions;
  }

  /** Embeds each text (synchronously under the hood; no network). */
  async embedDocuments(texts: string[]): Promise<number[][]> {
    return texts.map((text) => this.embedSync(text));
  }

  /** Embeds one query text. */
  async embedQuery(text: string): Promise<number[]> {
    return this.embedSync(text);
  }

  /** The synchronous embedding of `text` (all zeros for text without content words). */
  embedSync(text: string): number[] {
    const vector = new Float64Array(this.dimensions);
    for (const word of contentWords(text)) {
      this.#add(vector, `w:${stem(word)}`, WORD_WEIGHT);
      const padded = `<${word}>`;
      for (let start = 0; start + 3 <= padded.length; start++) {
        this.#add(vector, padded.slice(start, start + 3), TRIGRAM_WEIGHT);
      }
    }
    let norm = 0;
    for (const value of vector) norm += value * value;
    norm = Math.sqrt(norm);
    return Array.from(vector, (value) => (norm === 0 ? 0 : value / norm));
  }

  #add(vector: Float64Array, feature: string, weight: number): void {
    const hash = fnv1a(feature);
    const index = hash % this.dimensions;
    // A second, independent bit decides the sign, so colliding features cancel on average
    // instead of always adding up (the feature-hashing trick).
    vector[index]! += (hash & 0x80000000) === 0 ? weight : -weight;
  }
}

/** Lower-cased content words of `text` (stopwords and one-letter tokens removed). */
export function contentWords(text: string): string[] {
  const words = text.normalize('NFKC').toLowerCase().match(WORD) ?? [];
  return words.filter((word) => word.length > 1 && !STOPWORDS.has(word));
}

/** A light English stem: enough to join plural/verb forms, not a full Porter stemmer. */
export function stem(word: string): string {
  if (word.length <= 4 || /\d/.test(word)) return word;
  if (word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  for (const suffix of ['ing', 'ed', 'es', 'ly', 's']) {
    if (word.endsWith(suffix) && word.length - suffix.length >= 3) {
      return word.slice(0, -suffix.length);
    }
  }
  return word;
}

function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}
