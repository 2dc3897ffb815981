import type { z } from 'zod';
import { canonicalJson } from '../audit/index.js';
import { envelopeError } from './envelope.js';

/** What one fork-join branch produced from the shared snapshot. */
export interface BranchResult<Payload = unknown> {
  /** Unique per fork; merges process branches in this id's order, never in finishing order. */
  branch: string;
  payload: Payload;
  /** How sure the branch is, ≥ 0 (default 1); weights the confidence-weighted merge. */
  confidence?: number;
}

/** Branches that disagree about one value. */
export interface MergeConflict {
  /** Where in the payload, e.g. `['risk', 'level']`. */
  path: ReadonlyArray<string | number>;
  /** One per branch that has a value here, in branch-id order. */
  candidates: ReadonlyArray<{ branch: string; value: unknown; confidence: number }>;
}

/** Combines branch results into one payload; the same set gives the same result in any order. */
export interface MergeStrategy<Payload = unknown> {
  readonly name: string;
  /** @throws VeridexError `envelope_invalid` (reason `merge_conflict`, `schema_mismatch` or `malformed`). */
  merge(results: readonly BranchResult<Payload>[]): Payload;
}

type Candidate = MergeConflict['candidates'][number];
type Resolve = (conflict: MergeConflict) => unknown;
type ArrayMode = { kind: 'union' } | { kind: 'weighted'; minSupport: number };

/**
 * Deterministic fork-join merges (seed 003 pitfall 4). Every strategy first orders branches by
 * id, merges objects key by key and arrays as sets (by canonical JSON), and differs only in
 * how a disagreement about a single value is settled. With a zod `schema` the merged payload
 * is validated and the schema's output returned.
 *
 * @example
 * const strategy = mergeStrategies.confidenceWeighted({ schema: Findings });
 * strategy.merge([{ branch: 'a', payload: x, confidence: 0.9 }, { branch: 'b', payload: y, confidence: 0.4 }]);
 */
export const mergeStrategies = {
  /**
   * Schema-aware union: objects merged by key, arrays unioned (first appearance in branch
   * order). A scalar disagreement throws `merge_conflict`, or with
   * `onConflict: 'lowest_branch'` takes the value of the lowest branch id.
   */
  union<Payload>(
    options: { schema?: z.ZodType<Payload>; onConflict?: 'error' | 'lowest_branch' } = {},
  ): MergeStrategy<Payload> {
    const resolve: Resolve =
      options.onConflict === 'lowest_branch'
        ? (conflict) => conflict.candidates[0]!.value
        : throwConflict;
    return strategy('union', { kind: 'union' }, resolve, options.schema);
  },

  /**
   * Confidence-weighted voting: a disagreement goes to the value with the highest summed
   * confidence (ties: the smallest canonical JSON); with `numbers: 'average'` numbers are
   * averaged by confidence instead. Array items are kept when their summed confidence is at
   * least `minSupport` (a share of all branches' confidence, default 0), most supported first.
   */
  confidenceWeighted<Payload>(
    options: {
      schema?: z.ZodType<Payload>;
      numbers?: 'vote' | 'average';
      minSupport?: number;
    } = {},
  ): MergeStrategy<Payload> {
    const average = options.numbers === 'average';
    const resolve: Resolve = (conflict) =>
      average && conflict.candidates.every((candidate) => typeof candidate.value === 'number')
        ? weightedAverage(conflict.candidates)
        : vote(conflict.candidates);
    return strategy(
      'confidence_weighted',
      { kind: 'weighted', minSupport: options.minSupport ?? 0 },
      resolve,
      options.schema,
    );
  },

  /** Union, with every disagreement settled by your `resolve` (candidates in branch-id order). */
  resolver<Payload>(
    resolve: (conflict: MergeConflict) => unknown,
    options: { schema?: z.ZodType<Payload> } = {},
  ): MergeStrategy<Payload> {
    return strategy('resolver', { kind: 'union' }, resolve, options.schema);
  },
};

function strategy<Payload>(
  name: string,
  arrays: ArrayMode,
  resolve: Resolve,
  schema: z.ZodType<Payload> | undefined,
): MergeStrategy<Payload> {
  return {
    name,
    merge(results) {
      const candidates = orderedCandidates(results);
      if (candidates.length === 0)
        throw envelopeError('malformed', 'A fork-join merge needs at least one branch result.');
      const merged = mergeValues(candidates, [], arrays, resolve);
      if (!schema) return merged as Payload;
      const parsed = schema.safeParse(merged);
      if (!parsed.success) {
        const issues = parsed.error.issues
          .slice(0, 5)
          .map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`);
        throw envelopeError(
          'schema_mismatch',
          `The merged payload does not match the schema: ${issues.join('; ')}.`,
          { issues },
        );
      }
      return parsed.data;
    },
  };
}

function orderedCandidates(results: readonly BranchResult[]): Candidate[] {
  const seen = new Set<string>();
  for (const result of results) {
    if (seen.has(result.branch))
      throw envelopeError(
        'malformed',
        `Branch "${result.branch}" reported twice; branch ids must be unique per fork.`,
      );
    seen.add(result.branch);
    const confidence = result.confidence ?? 1;
    if (!(Number.isFinite(confidence) && confidence >= 0)) {
      throw envelopeError(
        'malformed',
        `Branch "${result.branch}" has confidence ${confidence}; use a finite number ≥ 0.`,
      );
    }
  }
  return [...results]
    .sort((a, b) => (a.branch < b.branch ? -1 : a.branch > b.branch ? 1 : 0))
    .map((result) => ({
      branch: result.branch,
      value: result.payload,
      confidence: result.confidence ?? 1,
    }));
}

function mergeValues(
  candidates: Candidate[],
  path: Array<string | number>,
  arrays: ArrayMode,
  resolve: Resolve,
): unknown {
  const first = canonicalJson(candidates[0]!.value);
  if (
    candidates.every((candidate, index) => index === 0 || canonicalJson(candidate.value) === first)
  ) {
    return JSON.parse(first);
  }
  if (candidates.every((candidate) => isPlainObject(candidate.value))) {
    const keys = [
      ...new Set(candidates.flatMap((candidate) => Object.keys(candidate.value as object))),
    ].sort();
    const merged: Record<string, unknown> = {};
    for (const key of keys) {
      const present = candidates
        .filter((candidate) => (candidate.value as Record<string, unknown>)[key] !== undefined)
        .map((candidate) => ({
          ...candidate,
          value: (candidate.value as Record<string, unknown>)[key],
        }));
      if (present.length > 0) merged[key] = mergeValues(present, [...path, key], arrays, resolve);
    }
    return merged;
  }
  if (candidates.every((candidate) => Array.isArray(candidate.value)))
    return mergeArrays(candidates, arrays);
  return resolve({ path, candidates });
}

function mergeArrays(candidates: Candidate[], arrays: ArrayMode): unknown[] {
  const items = new Map<string, { value: unknown; support: number; order: number }>();
  for (const candidate of candidates) {
    const counted = new Set<string>();
    for (const value of candidate.value as unknown[]) {
      const key = canonicalJson(value);
      const item = items.get(key) ?? { value, support: 0, order: items.size };
      if (!counted.has(key)) item.support += candidate.confidence;
      counted.add(key);
      items.set(key, item);
    }
  }
  const all = [...items.values()];
  if (arrays.kind === 'union') return all.map((item) => structuredClone(item.value));
  const total = candidates.reduce((sum, candidate) => sum + candidate.confidence, 0);
  return all
    .filter((item) => item.support >= arrays.minSupport * total)
    .sort((a, b) => b.support - a.support || a.order - b.order)
    .map((item) => structuredClone(item.value));
}

function vote(candidates: readonly Candidate[]): unknown {
  const tally = new Map<string, number>();
  for (const candidate of candidates) {
    const key = canonicalJson(candidate.value);
    tally.set(key, (tally.get(key) ?? 0) + candidate.confidence);
  }
  const [winner] = [...tally.entries()].sort(
    (a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0),
  );
  return JSON.parse(winner![0]);
}

function weightedAverage(candidates: readonly Candidate[]): number {
  const weight = candidates.reduce((sum, candidate) => sum + candidate.confidence, 0);
  if (weight === 0)
    return (
      candidates.reduce((sum, candidate) => sum + (candidate.value as number), 0) /
      candidates.length
    );
  return (
    candidates.reduce(
      (sum, candidate) => sum + candidate.confidence * (candidate.value as number),
      0,
    ) / weight
  );
}

function throwConflict(conflict: MergeConflict): never {
  const where = conflict.path.length === 0 ? '(root)' : conflict.path.join('.');
  const values = conflict.candidates.map(
    (candidate) => `${candidate.branch}=${clip(canonicalJson(candidate.value))}`,
  );
  throw envelopeError(
    'merge_conflict',
    `Fork-join branches disagree at ${where}: ${values.join(', ')}. Use mergeStrategies.confidenceWeighted, a resolver, or onConflict: 'lowest_branch'.`,
    { path: conflict.path, branches: conflict.candidates.map((candidate) => candidate.branch) },
  );
}

function clip(text: string): string {
  return text.length <= 60 ? text : `${text.slice(0, 59)}…`;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
