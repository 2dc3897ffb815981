import { createHash, type Hash } from 'node:crypto';
import type { BaseMessage } from '@langchain/core/messages';
import { sha256Hex } from '../audit/index.js';
import type { HistoryUnit } from './history-units.js';

const byContent = new WeakMap<BaseMessage, { content: unknown; fingerprint: string }>();

/**
 * A short identity for a message, used to tell whether a cached summary still covers the
 * same messages. LangGraph gives every message in state a stable `id`; the fingerprint is
 * that id plus the content's length (so a message replaced by id with different content is
 * noticed in the common case). Messages without an id are hashed by content.
 */
export function messageFingerprint(message: BaseMessage): string {
  const content = message.content;
  if (message.id) {
    const length = typeof content === 'string' ? content.length : `b${content.length}`;
    return `${message.id}:${length}`;
  }
  const cached = byContent.get(message);
  if (cached && cached.content === content) return cached.fingerprint;
  const calls = (message as { tool_calls?: Array<{ id?: string; name?: string; args?: unknown }> })
    .tool_calls;
  const fingerprint = sha256Hex(
    JSON.stringify([
      message.getType(),
      content,
      calls?.map((call) => [call.id, call.name, call.args]) ?? null,
      (message as { tool_call_id?: string }).tool_call_id ?? null,
    ]),
  ).slice(0, 32);
  byContent.set(message, { content, fingerprint });
  return fingerprint;
}

/**
 * Hashes growing prefixes of a unit list: `at(count)` is the SHA-256 of the fingerprints of
 * the first `count` units under `seed`. Counts must be asked for in increasing order; the
 * hash state is carried forward, so all prefixes together cost one pass.
 */
export class PrefixHasher {
  readonly #units: readonly HistoryUnit[];
  readonly #hash: Hash;
  #consumed = 0;

  constructor(units: readonly HistoryUnit[], seed: string) {
    this.#units = units;
    this.#hash = createHash('sha256').update(seed).update('\n');
  }

  /** The hash of the first `count` units. */
  at(count: number): string {
    if (count < this.#consumed) throw new Error('PrefixHasher: counts must not decrease.');
    // One update per requested prefix: thousands of tiny native calls cost more than the join.
    const parts: string[] = [];
    for (; this.#consumed < count; this.#consumed++) {
      for (const message of this.#units[this.#consumed]!.messages) {
        parts.push(messageFingerprint(message), '\u0001');
      }
      parts.push('\n');
    }
    if (parts.length > 0) this.#hash.update(parts.join(''));
    return this.#hash.copy().digest('hex');
  }
}
