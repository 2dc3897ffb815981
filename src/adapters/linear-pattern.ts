import { buildAutomaton, isUnbounded } from './pattern-automaton.js';
import { assertBoundedRoutes } from './pattern-routes.js';
import {
  type CheckBudget,
  type PatternNode,
  PatternRefusal,
  parsePattern,
  spend,
} from './pattern-syntax.js';

/** Longest imported pattern accepted (UTF-16 code units). */
export const MAX_PATTERN_LENGTH = 1_000;
/**
 * Work units one pattern's check may spend, per character of the pattern (plus a few), so that
 * checking a document costs time proportional to its size. Ordinary patterns need 3–30.
 */
const WORK_PER_CHARACTER = 50;
const WORK_BASE = 500;

// Verdicts by pattern text: the check is deterministic, and a listing repeats its patterns.
const verdicts = new Map<string, { refusal?: string; work: number }>();
const MAX_VERDICTS = 2_048;

/**
 * Why the backtracking matcher could take more than linear time on `pattern` compiled as
 * `new RegExp(pattern)` (no flags) and tried against untrusted text with `test` — or `undefined`
 * when it is proven linear. The proof counts the routes the matcher can keep open
 * (`assertBoundedRoutes`); a lookaround whose body reads without bound is accepted only where it
 * runs once per match (an anchored pattern, outside quantifiers, before any unbounded one).
 * Backreferences and syntax the parser does not know are refused (`parsePattern`). The check
 * reads at most {@link MAX_PATTERN_LENGTH} characters and spends a bounded amount of work.
 *
 * @returns the reason and the work spent (0 for a verdict already known).
 */
export function linearPatternRefusal(pattern: string): { refusal?: string; work: number } {
  const known = verdicts.get(pattern);
  if (known) return { ...(known.refusal ? { refusal: known.refusal } : {}), work: 0 };
  const budget = { spent: 0, limit: WORK_BASE + WORK_PER_CHARACTER * pattern.length };
  let refusal: string | undefined;
  try {
    assertLinear(pattern, budget);
  } catch (error) {
    if (!(error instanceof PatternRefusal)) throw error;
    refusal = error.message;
  }
  const verdict = { ...(refusal ? { refusal } : {}), work: budget.spent };
  if (verdicts.size >= MAX_VERDICTS) verdicts.clear();
  verdicts.set(pattern, verdict);
  return verdict;
}

function assertLinear(pattern: string, budget: CheckBudget): void {
  if (pattern.length > MAX_PATTERN_LENGTH) {
    throw new PatternRefusal(`longer than ${MAX_PATTERN_LENGTH} characters`);
  }
  spend(budget, pattern.length);
  const root = parsePattern(pattern);
  const anchored = isAnchored(root);
  checkLookarounds(root, anchored, budget);
  if (anchored) {
    assertBoundedRoutes(buildAutomaton(root, budget), false, budget);
    return;
  }
  // Tried at every start until one matches. Once the pattern's head has matched, an ending
  // that can match nothing and asserts nothing (`[a-z]+` is `[a-z]` then `[a-z]*`) always
  // lets the match succeed: it is entered once, so it needs only the anchored proof.
  const { head, ending } = splitEnding(root);
  assertBoundedRoutes(buildAutomaton(head, budget), true, budget);
  if (ending) assertBoundedRoutes(buildAutomaton(ending, budget), false, budget);
}

function splitEnding(root: PatternNode): { head: PatternNode; ending?: PatternNode } {
  const items = root.kind === 'sequence' ? [...root.items] : [root];
  const ending: PatternNode[] = [];
  while (items.length > 0) {
    const last = items.at(-1)!;
    if (!assertsNothing(last)) break;
    if (matchesEmpty(last)) {
      ending.unshift(items.pop()!);
      continue;
    }
    if (last.kind === 'repeat' && last.max > last.min) {
      items[items.length - 1] = { ...last, max: last.min };
      ending.unshift({ ...last, min: 0, max: last.max - last.min });
    }
    break;
  }
  if (ending.length === 0) return { head: root };
  return {
    head: { kind: 'sequence', items },
    ending: { kind: 'sequence', items: ending },
  };
}

function matchesEmpty(node: PatternNode): boolean {
  switch (node.kind) {
    case 'chars':
      return false;
    case 'repeat':
      return node.min === 0 || matchesEmpty(node.body);
    case 'sequence':
      return node.items.every(matchesEmpty);
    case 'alternation':
      return node.branches.some(matchesEmpty);
    default:
      return true;
  }
}

function assertsNothing(node: PatternNode): boolean {
  switch (node.kind) {
    case 'chars':
      return true;
    case 'repeat':
      return assertsNothing(node.body);
    case 'sequence':
      return node.items.every(assertsNothing);
    case 'alternation':
      return node.branches.every(assertsNothing);
    default:
      return false;
  }
}

// Without the `m` flag `^` matches only at the start: every other start fails at once.
function isAnchored(node: PatternNode): boolean {
  if (node.kind === 'assertion') return node.start;
  if (node.kind === 'sequence') return node.items.length > 0 && isAnchored(node.items[0]!);
  if (node.kind === 'alternation') return node.branches.every(isAnchored);
  return false;
}

// A lookaround is matched afresh each time a route reaches it. One that reads a bounded
// stretch costs a constant each time; one that reads without bound must be reached a bounded
// number of times in all: anchored, outside quantifiers, after no unbounded quantifier.
function checkLookarounds(root: PatternNode, anchored: boolean, budget: CheckBudget): void {
  const walk = (node: PatternNode, repeated: boolean, afterUnbounded: boolean): void => {
    switch (node.kind) {
      case 'look': {
        if (hasLook(node.body)) throw new PatternRefusal('a lookaround inside a lookaround');
        if (readsUnbounded(node.body) && (!anchored || repeated || afterUnbounded)) {
          throw new PatternRefusal(
            'a lookaround reading without bound where the matcher can reach it many times',
          );
        }
        assertBoundedRoutes(buildAutomaton(node.body, budget, node.behind), false, budget);
        return;
      }
      case 'sequence': {
        let after = afterUnbounded;
        for (const item of node.items) {
          walk(item, repeated, after);
          after ||= readsUnbounded(item);
        }
        return;
      }
      case 'alternation':
        for (const branch of node.branches) walk(branch, repeated, afterUnbounded);
        return;
      case 'repeat':
        walk(node.body, repeated || node.max > 1, afterUnbounded);
        return;
      default:
        return;
    }
  };
  walk(root, false, false);
}

function readsUnbounded(node: PatternNode): boolean {
  switch (node.kind) {
    case 'repeat':
      return isUnbounded(node.max) || readsUnbounded(node.body);
    case 'sequence':
      return node.items.some(readsUnbounded);
    case 'alternation':
      return node.branches.some(readsUnbounded);
    default:
      return false;
  }
}

function hasLook(node: PatternNode): boolean {
  switch (node.kind) {
    case 'look':
      return true;
    case 'repeat':
      return hasLook(node.body);
    case 'sequence':
      return node.items.some(hasLook);
    case 'alternation':
      return node.branches.some(hasLook);
    default:
      return false;
  }
}
