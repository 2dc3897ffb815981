import { type BaseMessage, isHumanMessage, isToolMessage } from '@langchain/core/messages';
import { foldText } from '../identity/index.js';
import type { MemorySource } from '../policy/index.js';
import { carriesToolValue, toolValues } from './high-value-tokens.js';
import { contentWords, stem } from './local-embeddings.js';
import { messageText } from './memory-extractor.js';

/** Where the runtime says a write's content comes from, and why. */
export interface DerivedProvenance {
  source: Extract<MemorySource, 'user' | 'model' | 'tool'>;
  /**
   * `tool_value`: it carries a high-value value (an IBAN, an account number, an amount, an
   * e-mail address, a URL) that tool output in the conversation holds, however spelled;
   * `tool_text`: it carries words only tool output supplied; `user_text`: it restates what
   * the user wrote; `tool_in_turn`: not the user's words, and tool output was in the turn the
   * model wrote it in (injected text may have steered it); `model`: the model's own words.
   */
  basis: 'tool_value' | 'tool_text' | 'user_text' | 'tool_in_turn' | 'model';
}

/** Share of a write's words the user's messages must hold for it to count as theirs. */
const USER_COVERAGE = 0.5;

/**
 * Derives a memory write's source from the conversation it was written in — never from what
 * the model declares. The write's words (content and object; stemmed, case-folded, NFKC,
 * invisible characters removed) are compared with the user's messages and with tool output:
 *
 * 0. a high-value value (IBAN, account number, long digit run, amount, e-mail address, URL)
 *    that tool output anywhere in the conversation holds — compared with case, width,
 *    invisibles and separators removed, so `D-E-8-9…` is `DE89…` — → `tool`, before anything
 *    the user wrote is counted: the user asking about a value does not make it theirs;
 * 1. a word the user never wrote that tool output holds → `tool` (an assistant answer that
 *    repeats injected tool text lands here too: the words are the tool's);
 * 2. at least half of its words are the user's → `user`;
 * 3. otherwise, when tool output was in the current turn (since the last user message) →
 *    `tool`, since injected text may have steered what the model wrote;
 * 4. otherwise → `model`.
 *
 * Lexical, so a paraphrase of tool text in other words is caught by rule 3 only within the
 * turn the tool answered in.
 *
 * @example deriveProvenance(['The user lives in Porto'], [new HumanMessage('I live in Porto')]).source // 'user'
 */
export function deriveProvenance(
  texts: readonly string[],
  conversation: readonly BaseMessage[],
): DerivedProvenance {
  const toolOutputs = conversation.filter((message) => isToolMessage(message)).map(messageText);
  if (carriesToolValue(texts, toolValues(toolOutputs))) {
    return { source: 'tool', basis: 'tool_value' };
  }
  const words = termsOf(texts);
  const user = termsOf(conversation.filter((message) => isHumanMessage(message)).map(messageText));
  const tool = termsOf(toolOutputs);
  const lastUser = conversation.findLastIndex((message) => isHumanMessage(message));
  const toolInTurn = conversation.slice(lastUser + 1).some((message) => isToolMessage(message));
  if (words.size === 0) return toolInTurn ? tool_in_turn : model;
  let covered = 0;
  for (const word of words) {
    if (holds(user, word)) covered++;
    else if (holds(tool, word)) return { source: 'tool', basis: 'tool_text' };
  }
  if (covered / words.size >= USER_COVERAGE) return { source: 'user', basis: 'user_text' };
  return toolInTurn ? tool_in_turn : model;
}

const tool_in_turn: DerivedProvenance = { source: 'tool', basis: 'tool_in_turn' };
const model: DerivedProvenance = { source: 'model', basis: 'model' };

const TRUST_RANK: Record<MemorySource, number> = {
  tool: 0,
  model: 1,
  import: 1,
  user: 2,
  system: 2,
};

/** The less trusted of two sources: a declared source can lower what was derived, never raise it. */
export function leastTrusted(declared: MemorySource, derived: MemorySource): MemorySource {
  return TRUST_RANK[derived] < TRUST_RANK[declared] ? derived : declared;
}

function termsOf(texts: readonly string[]): Set<string> {
  const terms = new Set<string>();
  for (const text of texts) {
    for (const word of contentWords(foldText(text))) {
      if (!GENERIC.has(word)) terms.add(stem(word));
    }
  }
  return terms;
}

// Words every memory sentence uses ("The user's name is …"): they ground nothing.
const GENERIC = new Set(['user', 'users', 'assistant', 'customer', 'asked', 'answered', 'also']);

/** `word` or a stem sharing its first letters (≥ 3): "live" and "liv" (from "lives") meet. */
function holds(terms: ReadonlySet<string>, word: string): boolean {
  if (terms.has(word)) return true;
  if (word.length < 3) return false;
  for (const term of terms) {
    if (term.length >= 3 && (term.startsWith(word) || word.startsWith(term))) return true;
  }
  return false;
}
