import type { CharSet } from './pattern-char-set.js';
import { type CheckBudget, type PatternNode, PatternRefusal, spend } from './pattern-syntax.js';

/**
 * The paths a backtracking matcher can take through a pattern, as a position automaton
 * (Glushkov's construction) that counts routes: `follow[p]` maps each position `q` that can
 * read the next character after `p` to the number of distinct ways the matcher can get from
 * `p` to `q` — through alternatives that match nothing, quantifier iterations, assertions —
 * since a backtracking matcher tries each of them. `(a+)+` thus has two routes from its one
 * position back to itself, which is what makes it exponential. Position 0 is the start.
 */
export interface PatternAutomaton {
  /** What each position reads (index 0, the start, reads nothing). */
  sets: CharSet[];
  follow: Array<Map<number, number>>;
}

// Largest route count kept; anything above is as bad as this.
const SATURATED = 1 << 20;
// Counted repetitions above this are read as unbounded (more paths, never fewer).
const MAX_EXPANDED_COUNT = 16;
const MAX_POSITIONS = 1_500;
const MAX_EDGES = 100_000;

/** True for a quantifier maximum the automaton reads as unbounded (`*`, `+`, `{n,}`, `{0,50}`). */
export function isUnbounded(max: number): boolean {
  return max > MAX_EXPANDED_COUNT;
}

interface Fragment {
  /** Routes from the fragment's start to each position that can read its first character. */
  first: Map<number, number>;
  /** Routes from each position that can read its last character to the fragment's end. */
  last: Map<number, number>;
  /** Routes through the fragment that read nothing. */
  empty: number;
}

const times = (a: number, b: number) => Math.min(a * b, SATURATED);
const plus = (a: number, b: number) => Math.min(a + b, SATURATED);

/**
 * The automaton of `root`, read backwards when `reverse` (a lookbehind body is matched right to
 * left). Counted repetitions (`{2,5}`) are unrolled, as the matcher's counter takes the same
 * paths; above 16 they are read as `{n,}`.
 *
 * @throws PatternRefusal above 1,500 positions or 100,000 edges, or past `budget`.
 */
export function buildAutomaton(
  root: PatternNode,
  budget: CheckBudget,
  reverse = false,
): PatternAutomaton {
  const sets: CharSet[] = [[]];
  const follow: Array<Map<number, number>> = [new Map()];
  let edges = 0;

  const link = (from: Map<number, number>, to: Map<number, number>) => {
    spend(budget, from.size * to.size);
    for (const [p, routesIn] of from) {
      const out = follow[p]!;
      for (const [q, routesOut] of to) {
        if (!out.has(q) && ++edges > MAX_EDGES) {
          throw new PatternRefusal(`more than ${MAX_EDGES} transitions to check`);
        }
        out.set(q, plus(out.get(q) ?? 0, times(routesIn, routesOut)));
      }
    }
  };
  const scaled = (routes: Map<number, number>, factor: number, into: Map<number, number>) => {
    if (factor === 0) return into;
    spend(budget, routes.size);
    for (const [position, count] of routes) {
      into.set(position, plus(into.get(position) ?? 0, times(count, factor)));
    }
    return into;
  };
  const concat = (a: Fragment, b: Fragment): Fragment => {
    link(a.last, b.first);
    return {
      first: scaled(b.first, a.empty, new Map(a.first)),
      last: scaled(a.last, b.empty, new Map(b.last)),
      empty: times(a.empty, b.empty),
    };
  };
  const nothing = (): Fragment => ({ first: new Map(), last: new Map(), empty: 1 });

  const build = (node: PatternNode): Fragment => {
    spend(budget, 1); // unrolled repetitions build a body many times
    switch (node.kind) {
      case 'chars': {
        const position = sets.length;
        if (position > MAX_POSITIONS) {
          throw new PatternRefusal(`more than ${MAX_POSITIONS} positions to check`);
        }
        spend(budget, 1);
        sets.push(node.set);
        follow.push(new Map());
        return { first: new Map([[position, 1]]), last: new Map([[position, 1]]), empty: 0 };
      }
      case 'assertion':
      case 'look':
        return nothing();
      case 'sequence': {
        const items = reverse ? [...node.items].reverse() : node.items;
        return items.reduce((fragment, item) => concat(fragment, build(item)), nothing());
      }
      case 'alternation': {
        const result: Fragment = { first: new Map(), last: new Map(), empty: 0 };
        for (const branch of node.branches) {
          const fragment = build(branch);
          scaled(fragment.first, 1, result.first);
          scaled(fragment.last, 1, result.last);
          result.empty = plus(result.empty, fragment.empty);
        }
        return result;
      }
      case 'repeat':
        return repeat(node.body, node.min, node.max);
    }
  };

  // The matcher refuses an optional iteration that reads nothing (ECMA-262 RepeatMatcher), so
  // iterations past the minimum count only their routes that read something.
  const nonEmpty = (fragment: Fragment): Fragment => ({ ...fragment, empty: 0 });
  const repeat = (body: PatternNode, min: number, max: number): Fragment => {
    const unbounded = isUnbounded(max);
    const required = Math.min(min, MAX_EXPANDED_COUNT);
    let result = nothing();
    for (let copy = 0; copy < required; copy++) result = concat(result, build(body));
    if (unbounded) {
      const loop = nonEmpty(build(body));
      link(loop.last, loop.first);
      return concat(result, { ...loop, empty: 1 });
    }
    // `x{0,3}` is `(x(x(x)?)?)?`: after each iteration, stop or go on.
    let optional = nothing();
    for (let copy = required; copy < max; copy++) {
      optional = { ...concat(nonEmpty(build(body)), optional), empty: 1 };
    }
    return concat(result, optional);
  };

  const fragment = build(root);
  for (const [position, routes] of fragment.first) follow[0]!.set(position, routes);
  return { sets, follow };
}
