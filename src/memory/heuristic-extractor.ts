import { isAIMessage, isHumanMessage } from '@langchain/core/messages';
import type { MemoryExtraction, MemoryExtractor } from './memory-extractor.js';
import { messageText, participantsOf } from './memory-extractor.js';
import type { MemoryWriteInput } from './types.js';

interface Pattern {
  pattern: RegExp;
  predicate: (match: RegExpMatchArray) => string;
  object: (match: RegExpMatchArray) => string;
  sentence: (predicate: string, object: string) => string;
}

const VALUE = '([^.,;!?\\n]{1,80})';

// First-person statements a user makes about themselves. Deliberately few and literal: the
// heuristic extractor should rather miss a fact than invent one.
const PATTERNS: readonly Pattern[] = [
  {
    pattern: new RegExp(`\\b(?:my name is|call me)\\s+${VALUE}`, 'i'),
    predicate: () => 'name',
    object: (match) => match[1]!,
    sentence: (_, object) => `The user's name is ${object}.`,
  },
  {
    pattern: new RegExp(`\\bI live in\\s+${VALUE}`, 'i'),
    predicate: () => 'lives in',
    object: (match) => match[1]!,
    sentence: (_, object) => `The user lives in ${object}.`,
  },
  {
    pattern: new RegExp(`\\bI(?:'m| am) allergic to\\s+${VALUE}`, 'i'),
    predicate: () => 'is allergic to',
    object: (match) => match[1]!,
    sentence: (_, object) => `The user is allergic to ${object}.`,
  },
  {
    pattern: new RegExp(`\\bI (?:prefer|like|love)\\s+${VALUE}`, 'i'),
    predicate: () => 'prefers',
    object: (match) => match[1]!,
    sentence: (_, object) => `The user prefers ${object}.`,
  },
  {
    pattern: new RegExp(`\\bmy ([a-z][a-z ]{1,30}?) is\\s+${VALUE}`, 'i'),
    predicate: (match) => match[1]!.toLowerCase(),
    object: (match) => match[2]!,
    sentence: (predicate, object) => `The user's ${predicate} is ${object}.`,
  },
];

/**
 * The default extractor, no model needed. The episode is the run's first user request and
 * final answer; the facts are (1) working-memory items marked `promote`, and (2) literal
 * first-person statements in the user's messages ("my X is Y", "I live in …", "I prefer …",
 * "I'm allergic to …", "call me …"), recorded about subject `user` with source `user`.
 *
 * @example memoryNodes(memory, { extractor: heuristicExtractor() })
 */
export function heuristicExtractor(options: { confidence?: number } = {}): MemoryExtractor {
  const confidence = options.confidence ?? 0.8;
  return ({ messages, workingMemory }): MemoryExtraction => {
    const facts: MemoryWriteInput[] = workingMemory
      .filter((item) => item.promote)
      .map(({ promote: _promote, ...item }) => ({ ...item, tier: item.tier ?? 'semantic' }));
    const seen = new Set<string>();
    for (const message of messages.filter((entry) => isHumanMessage(entry))) {
      for (const sentence of messageText(message).split(/(?<=[.!?])\s+|\n+/)) {
        for (const { pattern, predicate, object, sentence: render } of PATTERNS) {
          const match = sentence.match(pattern);
          if (!match) continue;
          const name = predicate(match).trim();
          const value = object(match).trim();
          if (seen.has(name)) break;
          seen.add(name);
          facts.push({
            tier: 'semantic',
            content: render(name, value),
            subject: 'user',
            predicate: name,
            object: value,
            confidence,
            source: 'user',
          });
          break;
        }
      }
    }
    const request = messages.find((message) => isHumanMessage(message));
    const answer = [...messages]
      .reverse()
      .find((message) => isAIMessage(message) && messageText(message).trim());
    if (!request) return { facts };
    const cut = (text: string) => (text.length > 300 ? `${text.slice(0, 300)}…` : text);
    const summary = `User asked: ${cut(messageText(request).trim())}${
      answer ? ` Assistant answered: ${cut(messageText(answer).trim())}` : ''
    }`;
    return { episode: { summary, participants: participantsOf(messages) }, facts };
  };
}
