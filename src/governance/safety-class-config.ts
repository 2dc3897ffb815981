import { VeridexError } from '../errors/index.js';
import { foldText } from '../identity/canonical-identity.js';
import { confusableSkeleton } from '../identity/skeleton.js';
import { isGovernedTool, SAFETY_CLASSES, type SafetyClass } from '../tools/index.js';

/**
 * How plain LangChain tools are classified, on every path that accepts them (the governed tool
 * node, the createAgent middleware, `createGovernedAgent`). Governed tools declare their own
 * class. Fail closed (README "Fail closed: no silent safety class"): a plain tool that is
 * neither named in `safetyClasses` nor covered by an explicit `defaultSafetyClass` is refused,
 * and a `safetyClasses` key that names no plain tool is an error, never ignored.
 */
export interface ToolClassification {
  /** Safety class per plain tool, by its LangChain name (exactly). Governed tools declare their own. */
  safetyClasses?: Readonly<Record<string, SafetyClass>>;
  /**
   * Safety class of plain tools not in `safetyClasses`. No default: without it such a tool is
   * refused (`config_invalid`). Never `read`: a tool is read-only only when said so by name.
   */
  defaultSafetyClass?: Exclude<SafetyClass, 'read'>;
}

/** The least a LangChain tool has: a name, a description, an input schema and `invoke`. */
export interface LangChainToolLike {
  name: string;
  description?: string;
  schema?: unknown;
  invoke(input: unknown, config?: unknown): Promise<unknown>;
}

/** True for an object with what a LangChain tool has: a name, a schema and `invoke`. */
export function isLangChainTool(value: unknown): value is LangChainToolLike {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { name?: unknown }).name === 'string' &&
    typeof (value as { invoke?: unknown }).invoke === 'function' &&
    'schema' in value
  );
}

/**
 * Checks the classification's values: every `safetyClasses` value and `defaultSafetyClass` a
 * known class, the default never `read`. `where` prefixes messages (the path's name).
 * @throws VeridexError `config_invalid`.
 */
export function checkClassification(options: ToolClassification, where: string): void {
  const fallback = options.defaultSafetyClass;
  if (fallback !== undefined) {
    if ((fallback as SafetyClass) === 'read') {
      throw invalid(
        where,
        'defaultSafetyClass cannot be "read": a tool is read-only only when declared so by name in safetyClasses.',
      );
    }
    checkClass(fallback, 'defaultSafetyClass', where);
  }
  const classes = options.safetyClasses ?? {};
  if (typeof classes !== 'object' || classes === null || Array.isArray(classes)) {
    throw invalid(where, 'safetyClasses must be an object from tool name to safety class.');
  }
  for (const [name, value] of Object.entries(classes)) {
    checkClass(value, `safetyClasses[${JSON.stringify(name)}]`, where);
  }
}

/**
 * The safety class of the plain tool `name`: its `safetyClasses` entry, else the explicit
 * `defaultSafetyClass`; with neither, refused — a class guessed for a tool nobody classified
 * could let a payment run as a mere `write`.
 * @throws VeridexError `config_invalid` naming the tool and the ways to classify it.
 */
export function plainToolClass(
  name: string,
  options: ToolClassification,
  where: string,
): SafetyClass {
  checkClassification(options, where);
  const classes = options.safetyClasses ?? {};
  if (Object.hasOwn(classes, name)) return classes[name]!;
  if (options.defaultSafetyClass !== undefined) return options.defaultSafetyClass;
  const near = lookAlike(name, Object.keys(classes));
  throw invalid(
    where,
    `the plain tool ${JSON.stringify(name)} has no safety class${near === undefined ? '' : ` (safetyClasses names ${JSON.stringify(near)}, which only looks like it)`}. Classify it by name — safetyClasses: { ${JSON.stringify(name)}: 'write' } with one of ${SAFETY_CLASSES.join(', ')} — or wrap it with fromLangChainTool(tool, { safetyClass }), or set defaultSafetyClass explicitly for every unclassified plain tool.`,
  );
}

/**
 * Checks that every `safetyClasses` key names one of the plain tools `plainNames`: a key
 * naming a governed tool (it declares its own class) or nothing at all (a typo would leave the
 * tool it meant unclassified) is an error listing the known tools, with a look-alike hint.
 * @throws VeridexError `config_invalid`.
 */
export function checkClassifiedNames(
  options: ToolClassification,
  plainNames: readonly string[],
  governed: readonly { name: string; safetyClass: SafetyClass }[],
  where: string,
): void {
  const keys = Object.keys(options.safetyClasses ?? {});
  for (const key of keys) {
    const tool = governed.find((item) => item.name === key);
    if (tool && !plainNames.includes(key)) {
      throw invalid(
        where,
        `safetyClasses names ${JSON.stringify(key)}, a governed tool: it declares its own safety class (${tool.safetyClass}).`,
      );
    }
  }
  const unknown = keys.filter((key) => !plainNames.includes(key));
  if (unknown.length > 0) throw unknownNames(unknown, plainNames, where);
}

/** The error for `safetyClasses` keys naming no tool: what is unknown, what is known, what looks alike. */
export function unknownNames(
  unknown: readonly string[],
  known: readonly string[],
  where: string,
): VeridexError {
  const hints = unknown
    .map((key) => [key, lookAlike(key, known)] as const)
    .filter(([, near]) => near !== undefined)
    .map(([key, near]) => `${JSON.stringify(key)} looks like ${JSON.stringify(near)}`);
  return invalid(
    where,
    `safetyClasses names ${unknown.map((key) => JSON.stringify(key)).join(', ')}, but no plain tool has that name (plain tools: ${known.length === 0 ? 'none' : known.map((name) => JSON.stringify(name)).join(', ')}).${hints.length > 0 ? ` Did you mean: ${hints.join('; ')}?` : ''} An unknown name is an error, never ignored: the tool it meant would run unclassified.`,
  );
}

/**
 * For paths that take governed tools only (`runTool`, `toLangChainTool`, `serveMcp`, the
 * OpenAI Agents converter): refuses a plain LangChain tool (it declares no safety class) and a
 * `safetyClasses` map (it could only name governed tools, which declare their own, or
 * nothing), e.g. from an options object shared with the middleware.
 * @throws VeridexError `config_invalid`.
 */
export function requireGovernedTools(
  tools: readonly unknown[],
  options: unknown,
  where: string,
): void {
  for (const [index, item] of tools.entries()) {
    if (isGovernedTool(item)) continue;
    const name = isLangChainTool(item) ? JSON.stringify(item.name) : `tools[${index}]`;
    throw invalid(
      where,
      `${name} is not a governed tool${isLangChainTool(item) ? ' (a plain LangChain tool declares no safety class)' : ''}. Wrap it first: fromLangChainTool(tool, { safetyClass }) with one of ${SAFETY_CLASSES.join(', ')}.`,
    );
  }
  const classification = (options ?? {}) as ToolClassification;
  checkClassification(classification, where);
  const governed = tools.filter(isGovernedTool);
  checkClassifiedNames(classification, [], governed, where);
}

/**
 * A candidate that `name` reads as: the same after folding case, width, invisible characters,
 * surrounding spaces and confusable letters (Cyrillic `е` for `e`) — never a different tool
 * the author meant, so safe to refuse on.
 */
export function confusedWith(name: string, candidates: readonly string[]): string | undefined {
  const key = skeletonOf(name);
  return candidates.find((candidate) => candidate !== name && skeletonOf(candidate) === key);
}

/**
 * A candidate that `name` could be a typo of, for hints: {@link confusedWith}, else one within
 * two edits (`refnud` for `refund`). Cheap: names are short and lists small.
 */
export function lookAlike(name: string, candidates: readonly string[]): string | undefined {
  const confused = confusedWith(name, candidates);
  if (confused !== undefined) return confused;
  return candidates.find(
    (candidate) =>
      candidate !== name &&
      Math.min(name.length, candidate.length) >= 4 &&
      editDistanceAtMost(name, candidate, 2),
  );
}

function skeletonOf(text: string): string {
  return confusableSkeleton(foldText(text).trim());
}

/** Whether `a` and `b` are within `limit` insertions, deletions, substitutions or swaps. */
function editDistanceAtMost(a: string, b: string, limit: number): boolean {
  if (Math.abs(a.length - b.length) > limit) return false;
  let before: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= b.length; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, before[j - 2]! + 1);
      }
      current.push(best);
    }
    before = previous;
    previous = current;
  }
  return previous[b.length]! <= limit;
}

function checkClass(value: unknown, field: string, where: string): void {
  if (!SAFETY_CLASSES.includes(value as SafetyClass)) {
    throw invalid(
      where,
      `${field} must be one of ${SAFETY_CLASSES.join(', ')}; got ${JSON.stringify(String(value))}.`,
    );
  }
}

function invalid(where: string, message: string): VeridexError {
  return new VeridexError('config_invalid', `${where}: ${message}`);
}
