import { contentWords, stem } from './local-embeddings.js';
import type { ConflictResolver, MemoryRecord, SimilarityVerdict } from './types.js';

const NEGATIONS = new Set(['not', 'no', 'never', 'none', 'nobody', 'nothing', 'neither', 'nor']);

/**
 * The default conflict resolver: the higher confidence wins; on a tie the newer observation
 * (provenance timestamp) wins, and on equal timestamps the incoming record does.
 *
 * @example new MemoryManager({ db, policy, resolver: higherConfidenceWins });
 */
export const higherConfidenceWins: ConflictResolver = (existing, incoming) => {
  if (incoming.confidence !== existing.confidence) {
    return incoming.confidence > existing.confidence ? 'incoming' : 'existing';
  }
  return Date.parse(incoming.provenance.timestamp) >= Date.parse(existing.provenance.timestamp)
    ? 'incoming'
    : 'existing';
};

/**
 * The default, deliberately conservative classifier of two similar records (it would rather
 * link two facts than wrongly invalidate one):
 * - `duplicate`: same content words;
 * - `conflict`: the same statement negated ("Bob is [not] allergic to nuts"), or the same
 *   statement with a different value in the value slot — the last content word, or an
 *   aligned number ("the billing service runs on port 8443" vs "… 9000");
 * - `related`: anything else this similar. Facts with a subject and predicate conflict by key
 *   (same subject and predicate), which the manager checks before this.
 *
 * Plug in your own (e.g. an LLM judge) with the manager's `detector` option.
 */
export function detectConflict(
  existing: MemoryRecord,
  incoming: MemoryRecord,
  _similarity: number,
): SimilarityVerdict {
  const before = contentWords(existing.content).map(stem);
  const after = contentWords(incoming.content).map(stem);
  if (before.join(' ') === after.join(' ')) return 'duplicate';
  const withoutNegation = (words: string[]) => words.filter((word) => !NEGATIONS.has(word));
  const plainBefore = withoutNegation(before);
  const plainAfter = withoutNegation(after);
  if (plainBefore.join(' ') === plainAfter.join(' ')) return 'conflict';
  if (plainBefore.length !== plainAfter.length || plainBefore.length < 3) return 'related';
  const differing: number[] = [];
  plainBefore.forEach((word, index) => {
    if (word !== plainAfter[index]) differing.push(index);
  });
  if (differing.length !== 1) return 'related';
  const position = differing[0]!;
  if (position === 0) return 'related'; // a different subject, not a different value
  const isValueSlot = position === plainBefore.length - 1;
  const bothNumeric = /\d/.test(plainBefore[position]!) && /\d/.test(plainAfter[position]!);
  return isValueSlot || bothNumeric ? 'conflict' : 'related';
}
