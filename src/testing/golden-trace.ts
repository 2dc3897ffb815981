import type { TraceEvent } from '../audit/index.js';

/** Format tag of a golden trace file. */
export const TRACE_FORMAT = 'veridex.trace/v1';

/** A value in a golden trace: literal JSON, or `{ $match: "regex" }` for a volatile one. */
export type TraceValue =
  | string
  | number
  | boolean
  | null
  | readonly TraceValue[]
  | { readonly $match: string }
  | { readonly [key: string]: TraceValue };

/** One event of a golden trace: its type and the payload fields that matter. */
export interface TraceStep {
  type: string;
  [field: string]: TraceValue;
}

/** What a golden trace file holds: the steps of a thread's audit events, in order. */
export interface GoldenTrace {
  format: typeof TRACE_FORMAT;
  events: TraceStep[];
}

/**
 * Payload fields a trace keeps by default: what was called, what policy and approvers said,
 * and how it ended — not ids, hashes, amounts of time or free text that may be reworded.
 */
export const DEFAULT_TRACE_FIELDS: readonly string[] = [
  'toolName',
  'safetyClass',
  'verdict',
  'route',
  'ruleId',
  'requiredApprovals',
  'decision',
  'approver',
  'approvers',
  'status',
  'kind',
  'code',
  'via',
  'interruptIndex',
];

/** Options for {@link recordTrace}. */
export interface RecordTraceOptions {
  /** Payload fields to keep (default {@link DEFAULT_TRACE_FIELDS}). */
  fields?: readonly string[];
  /** Events to keep (default all). */
  include?: (event: TraceEvent) => boolean;
  /** Replace ids, hashes and timestamps by `{ $match }` patterns (default true; false keeps raw values). */
  patterns?: boolean;
}

// Values that differ on every run: kept as a pattern so the golden file still checks their shape.
const VOLATILE: ReadonlyArray<[RegExp, string]> = [
  [/^[0-9a-f]{64}$/, '^[0-9a-f]{64}$'],
  [/^evt_[0-9a-f]{32}$/, '^evt_[0-9a-f]{32}$'],
  [/^apr_[0-9a-f]{24}$/, '^apr_[0-9a-f]{24}$'],
  [
    /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/,
    '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d+)?Z$',
  ],
  [
    /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i,
    '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$',
  ],
];

/**
 * Records a thread's audit events as a golden trace: each event's type and the chosen payload
 * fields (ids, hashes, timestamps and other volatile strings among them become `{ $match }`
 * patterns). Event ids, hashes and timestamps of the events themselves are never part of it.
 *
 * @example const trace = recordTrace(await audit.events('payout'));
 */
export function recordTrace(
  events: readonly TraceEvent[],
  options: RecordTraceOptions = {},
): GoldenTrace {
  const fields = options.fields ?? DEFAULT_TRACE_FIELDS;
  const shape = options.patterns === false ? (value: TraceValue) => value : patterned;
  return {
    format: TRACE_FORMAT,
    events: events
      .filter((event) => options.include?.(event) ?? true)
      .map((event) => {
        const step: TraceStep = { type: event.type };
        for (const field of fields) {
          const value = event.payload[field];
          if (value !== undefined) step[field] = shape(value as TraceValue);
        }
        return step;
      }),
  };
}

function patterned(value: TraceValue): TraceValue {
  if (typeof value === 'string') {
    const volatile = VOLATILE.find(([shape]) => shape.test(value));
    return volatile ? { $match: volatile[1] } : value;
  }
  if (Array.isArray(value)) return value.map(patterned);
  if (typeof value === 'object' && value !== null && !('$match' in value)) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, patterned(item)]));
  }
  return value;
}

/**
 * Whether an actual value satisfies a golden one: `{ $match }` tests strings against the
 * pattern, everything else compares as JSON.
 */
export function traceValueMatches(
  golden: TraceValue | undefined,
  actual: TraceValue | undefined,
): boolean {
  if (isPattern(golden))
    return typeof actual === 'string' && new RegExp(golden.$match).test(actual);
  if (isPattern(actual)) return isPattern(golden) && golden.$match === actual.$match;
  if (Array.isArray(golden) || Array.isArray(actual)) {
    return (
      Array.isArray(golden) &&
      Array.isArray(actual) &&
      golden.length === actual.length &&
      golden.every((item, index) => traceValueMatches(item, actual[index]))
    );
  }
  if (
    typeof golden === 'object' &&
    golden !== null &&
    typeof actual === 'object' &&
    actual !== null
  ) {
    const keys = new Set([...Object.keys(golden), ...Object.keys(actual)]);
    return [...keys].every((key) =>
      traceValueMatches(
        (golden as Record<string, TraceValue>)[key],
        (actual as Record<string, TraceValue>)[key],
      ),
    );
  }
  return golden === actual;
}

function isPattern(value: TraceValue | undefined): value is { $match: string } {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    typeof (value as { $match?: unknown }).$match === 'string'
  );
}

/** One line per step, `type key=value …`, for readable diffs. */
export function renderStep(step: TraceStep): string {
  const fields = Object.entries(step)
    .filter(([key]) => key !== 'type')
    .map(
      ([key, value]) => `${key}=${isPattern(value) ? `/${value.$match}/` : JSON.stringify(value)}`,
    );
  return [step.type, ...fields].join(' ');
}
