import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import type { TraceEvent } from '../audit/index.js';
import {
  type GoldenTrace,
  type RecordTraceOptions,
  recordTrace,
  renderStep,
  TRACE_FORMAT,
  type TraceStep,
  traceValueMatches,
} from './golden-trace.js';

/** The parts of vitest's matcher context the matcher uses (no import of vitest itself). */
interface MatcherContext {
  isNot?: boolean;
  testPath?: string;
  /** vitest's snapshot state; its (private) update mode is `all` under `vitest -u`. */
  snapshotState?: unknown;
  // biome-ignore lint/suspicious/noExplicitAny: vitest's diff takes its own options type.
  utils?: { diff?: (a: any, b: any, options?: any) => string | null | undefined };
}

type Received = readonly TraceEvent[] | GoldenTrace;

/** Options of `toMatchTrace`: which fields to compare (see `recordTrace`). */
export type MatchTraceOptions = Pick<RecordTraceOptions, 'fields' | 'include'>;

/**
 * Vitest matcher comparing a thread's audit events with a golden trace: event types in order,
 * and the recorded payload fields (tool names, verdicts, routes, approvers, outcomes); ids,
 * hashes and timestamps match by pattern. `golden` is a trace object or a file path (relative
 * to the test file). A file is (re)written instead of compared when `VERIDEX_UPDATE_TRACES=1`
 * or vitest runs with `-u`, and created when missing — except in CI (`CI=true`), where a
 * missing golden file fails. A mismatch names the first differing event and shows a diff.
 *
 * @example
 * import { toMatchTrace } from '@veridex/langgraph/testing';
 * expect.extend({ toMatchTrace });
 * expect(await audit.events('payout')).toMatchTrace('__traces__/payout.trace.json');
 */
export function toMatchTrace(
  this: MatcherContext | undefined,
  received: Received,
  golden: GoldenTrace | string,
  options: MatchTraceOptions = {},
): { pass: boolean; message: () => string } {
  const actual = asTrace(received, options);
  if (typeof golden === 'string') {
    const path = resolveGoldenPath(golden, this?.testPath);
    const update =
      process.env.VERIDEX_UPDATE_TRACES === '1' ||
      (this?.snapshotState as { _updateSnapshot?: unknown } | undefined)?._updateSnapshot === 'all';
    const inCi = process.env.CI === 'true' || process.env.CI === '1';
    if (update || (!existsSync(path) && !inCi)) {
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, `${JSON.stringify(patternedFor(received, options), null, 2)}\n`);
      return { pass: !this?.isNot, message: () => `golden trace written to ${path}` };
    }
    if (!existsSync(path)) {
      return {
        pass: false,
        message: () =>
          `Golden trace ${path} does not exist. Record it with VERIDEX_UPDATE_TRACES=1 and commit it.`,
      };
    }
    golden = JSON.parse(readFileSync(path, 'utf8')) as GoldenTrace;
  }
  return compare(golden, actual, this?.utils?.diff);
}

/** Matchers to pass to `expect.extend`. */
export const traceMatchers = { toMatchTrace };

function asTrace(received: Received, options: MatchTraceOptions): GoldenTrace {
  if (Array.isArray(received)) return recordTrace(received, { ...options, patterns: false });
  return received as GoldenTrace;
}

function patternedFor(received: Received, options: MatchTraceOptions): GoldenTrace {
  return Array.isArray(received) ? recordTrace(received, options) : (received as GoldenTrace);
}

function resolveGoldenPath(path: string, testPath: string | undefined): string {
  if (isAbsolute(path)) return path;
  return testPath ? resolve(dirname(testPath), path) : resolve(path);
}

function stepMatches(golden: TraceStep | undefined, actual: TraceStep | undefined): boolean {
  if (!golden || !actual) return false;
  const keys = new Set([...Object.keys(golden), ...Object.keys(actual)]);
  return [...keys].every((key) => traceValueMatches(golden[key], actual[key]));
}

function compare(
  golden: GoldenTrace,
  actual: GoldenTrace,
  diff: ((a: string, b: string) => string | null | undefined) | undefined,
): { pass: boolean; message: () => string } {
  if (golden.format !== TRACE_FORMAT) {
    return { pass: false, message: () => `Not a ${TRACE_FORMAT} golden trace.` };
  }
  const length = Math.max(golden.events.length, actual.events.length);
  let first = -1;
  for (let index = 0; index < length && first < 0; index++) {
    if (!stepMatches(golden.events[index], actual.events[index])) first = index;
  }
  const pass = first < 0;
  return {
    pass,
    message: () => {
      if (pass) return 'expected the audit events not to match the golden trace, but they do';
      // Steps that match render as the actual line, so the diff shows only real differences.
      const expected = golden.events.map((step, index) =>
        stepMatches(step, actual.events[index])
          ? renderStep(actual.events[index]!)
          : renderStep(step),
      );
      const received = actual.events.map(renderStep);
      const header =
        `Audit events differ from the golden trace at event ${first}: ` +
        `expected ${golden.events[first] ? renderStep(golden.events[first]!) : '(no more events)'}, ` +
        `got ${actual.events[first] ? renderStep(actual.events[first]!) : '(no more events)'}.\n` +
        'Re-record with VERIDEX_UPDATE_TRACES=1 if the change is intended.';
      const body =
        diff?.(expected.join('\n'), received.join('\n')) ??
        [
          '- expected',
          ...expected.map((line) => `  ${line}`),
          '+ received',
          ...received.map((line) => `  ${line}`),
        ].join('\n');
      return `${header}\n\n${body}`;
    },
  };
}
