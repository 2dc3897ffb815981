import type { PatternAutomaton } from './pattern-automaton.js';
import { contains } from './pattern-char-set.js';
import { type CheckBudget, PatternRefusal, spend } from './pattern-syntax.js';

/** Most routes a matcher may keep open at one character; more is refused. */
export const MAX_LIVE_ROUTES = 32;
/** Most routes it may try (and see fail) for one character. */
const MAX_TRIED_ROUTES = 1_024;
const MAX_STATES = 4_000;

/**
 * Proves that a backtracking matcher (V8's Irregexp) runs `automaton` in time linear in the
 * input, or refuses. The matcher's work at one character is the number of routes through the
 * pattern that have read the input so far — from every start position when `floating` (an
 * unanchored pattern is tried at each one, `RegExp.prototype.test`) — and are still alive. This
 * explores every reachable vector of those counts (a subset construction that counts), one
 * class of characters at a time, and refuses as soon as one holds more than
 * {@link MAX_LIVE_ROUTES} routes, or tries more than 1,024: a pattern with two ways to read the
 * same text (`(a+)+`, `(a|a)*`), a polynomial one (`\d+\d+`, `[a-z]+@` tried at every start)
 * and one merely too ambiguous (`(a|a)(a|a)(a|a)…`) alike. When none does, the matcher's work is
 * at most 1,024 steps a character (assertions aside, which are read as always true: more
 * routes, never fewer).
 *
 * @throws PatternRefusal for a pattern that is not proven linear within the budget.
 */
export function assertBoundedRoutes(
  automaton: PatternAutomaton,
  floating: boolean,
  budget: CheckBudget,
): void {
  const { sets } = automaton;
  const targets = automaton.follow.map((edges) => [...edges.keys()]);
  const ways = automaton.follow.map((edges) => [...edges.values()]);
  const tried = new Float64Array(sets.length);
  const seen = new Set(['0:1']);
  const queue: Array<{ positions: number[]; counts: number[] }> = [{ positions: [0], counts: [1] }];
  while (queue.length > 0) {
    const { positions: from, counts } = queue.pop()!;
    // Every route the matcher tries next, whether the next character lets it through or not.
    const positions: number[] = [];
    let triedTotal = 0;
    for (let index = 0; index < from.length; index++) {
      const next = targets[from[index]!]!;
      const routes = ways[from[index]!]!;
      spend(budget, next.length + 1);
      for (let edge = 0; edge < next.length; edge++) {
        const position = next[edge]!;
        const added = Math.min(counts[index]! * routes[edge]!, MAX_TRIED_ROUTES + 1);
        if (tried[position] === 0) positions.push(position);
        tried[position] = Math.min(tried[position]! + added, MAX_TRIED_ROUTES + 1);
        triedTotal += added;
      }
    }
    if (triedTotal > MAX_TRIED_ROUTES) {
      throw new PatternRefusal(`more than ${MAX_TRIED_ROUTES} routes tried at one character`);
    }
    positions.sort((a, b) => a - b);
    // Characters that every tried position treats alike, as intervals of code units.
    const bounds = [0];
    for (const position of positions) {
      spend(budget, sets[position]!.length);
      for (const [low, high] of sets[position]!) bounds.push(low, high + 1);
    }
    bounds.sort((a, b) => a - b);
    // One vector per distinct set of positions a character lets through, keyed canonically.
    for (let index = 0; index < bounds.length; index++) {
      const unit = bounds[index]!;
      if (unit > 0xffff || (index > 0 && unit === bounds[index - 1])) continue;
      spend(budget, positions.length);
      let key = floating ? '0:1' : '';
      let live = 0;
      const through: number[] = floating ? [0] : [];
      const throughCounts: number[] = floating ? [1] : [];
      for (const position of positions) {
        if (!contains(sets[position]!, unit)) continue;
        const count = tried[position]!;
        key += `,${position}:${count}`;
        live += count;
        through.push(position);
        throughCounts.push(count);
      }
      if (live === 0 || seen.has(key)) continue;
      if (live + (floating ? 1 : 0) > MAX_LIVE_ROUTES) {
        throw new PatternRefusal(
          `more than ${MAX_LIVE_ROUTES} ways to read the same text at once (nested or adjacent quantifiers over the same characters)`,
        );
      }
      if (seen.size >= MAX_STATES) {
        throw new PatternRefusal('too complex to prove linear within the checking budget');
      }
      seen.add(key);
      queue.push({ positions: through, counts: throughCounts });
    }
    for (const position of positions) tried[position] = 0;
  }
}
