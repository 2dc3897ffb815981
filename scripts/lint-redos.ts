// `npm run lint:redos`: every regular expression in src/ must be safe from ReDoS (super-linear
// backtracking), as judged by recheck (https://makenowjust-labs.github.io/recheck/), which
// analyses a pattern as String.prototype.search/replace use it: tried from every position.
//
// The script parses each source file with the TypeScript compiler, collects every regex
// literal and every `new RegExp(...)` / `RegExp(...)` whose arguments it can evaluate (string
// literals, templates and `+` over `const` strings of the same file), and checks each one. A
// pattern it cannot evaluate, or that recheck reports as vulnerable or cannot decide, fails the
// run unless ALLOWLIST names it with the reason it is linear anyway.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { check, type Diagnostics } from 'recheck';
import ts from 'typescript';

/**
 * Reviewed exceptions, keyed by `file: /source/flags`. Each needs a reason that makes the
 * pattern linear without recheck's blessing (an input bound, a guard before the match).
 */
const ALLOWLIST: Readonly<Record<string, string>> = {
  'src/testing/golden-trace.ts: /new RegExp(golden.$match)/':
    'patterns come from golden trace files the test author writes and commits (trusted input, never model or tool output), matched against values of the project’s own audit events in tests',
};

interface Found {
  file: string;
  line: number;
  source?: string;
  flags?: string;
  unresolved?: string;
}

const root = join(import.meta.dirname, '..');

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return walk(path);
    return /\.(ts|mts|js|mjs)$/.test(name) && !name.endsWith('.d.ts') ? [path] : [];
  });
}

function collect(path: string): Found[] {
  const text = readFileSync(path, 'utf8');
  const file = relative(root, path);
  const sourceFile = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const constants = new Map<string, ts.Expression>();
  const found: Found[] = [];
  const lineOf = (node: ts.Node) =>
    sourceFile.getLineAndCharacterOfPosition(node.getStart(sourceFile)).line + 1;

  const evaluate = (node: ts.Expression, depth = 0): string | undefined => {
    if (depth > 20) return undefined;
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
    if (ts.isParenthesizedExpression(node)) return evaluate(node.expression, depth + 1);
    if (ts.isTemplateExpression(node)) {
      let result = node.head.text;
      for (const span of node.templateSpans) {
        const value = evaluate(span.expression, depth + 1);
        if (value === undefined) return undefined;
        result += value + span.literal.text;
      }
      return result;
    }
    if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.PlusToken) {
      const left = evaluate(node.left, depth + 1);
      const right = evaluate(node.right, depth + 1);
      return left === undefined || right === undefined ? undefined : left + right;
    }
    if (ts.isIdentifier(node)) {
      const initializer = constants.get(node.text);
      return initializer ? evaluate(initializer, depth + 1) : undefined;
    }
    return undefined;
  };

  const visitConstants = (node: ts.Node): void => {
    if (ts.isVariableDeclarationList(node) && node.flags & ts.NodeFlags.Const) {
      for (const declaration of node.declarations) {
        if (ts.isIdentifier(declaration.name) && declaration.initializer) {
          constants.set(declaration.name.text, declaration.initializer);
        }
      }
    }
    ts.forEachChild(node, visitConstants);
  };
  visitConstants(sourceFile);

  const visit = (node: ts.Node): void => {
    if (node.kind === ts.SyntaxKind.RegularExpressionLiteral) {
      const literal = node.getText(sourceFile);
      const end = literal.lastIndexOf('/');
      found.push({
        file,
        line: lineOf(node),
        source: literal.slice(1, end),
        flags: literal.slice(end + 1),
      });
    } else if (
      (ts.isNewExpression(node) || ts.isCallExpression(node)) &&
      ts.isIdentifier(node.expression) &&
      node.expression.text === 'RegExp'
    ) {
      const [patternArgument, flagsArgument] = node.arguments ?? [];
      const source = patternArgument ? evaluate(patternArgument) : undefined;
      const flags = flagsArgument ? evaluate(flagsArgument) : '';
      if (source === undefined || flags === undefined) {
        found.push({ file, line: lineOf(node), unresolved: node.getText(sourceFile) });
      } else {
        found.push({ file, line: lineOf(node), source, flags });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sourceFile);
  return found;
}

function describe(diagnostics: Diagnostics): string {
  if (diagnostics.status === 'vulnerable') {
    const complexity = diagnostics.complexity;
    const kind =
      complexity.type === 'polynomial'
        ? `polynomial, degree ${complexity.degree}`
        : complexity.type;
    return `vulnerable (${kind}); attack: ${diagnostics.attack.pattern}`;
  }
  if (diagnostics.status === 'unknown') return `unknown (${diagnostics.error.kind})`;
  return diagnostics.status;
}

const files = walk(join(root, 'src'));
const patterns = files.flatMap(collect);
let failures = 0;
let checked = 0;
const seenKeys = new Set<string>();
// Deterministic: a fixed seed and step limits instead of time limits, one pattern at a time,
// so a loaded machine gets the same verdicts as an idle one.
const results: Array<{ found: Found; verdict: Diagnostics | undefined }> = [];
for (const found of patterns) {
  if (found.unresolved !== undefined) {
    results.push({ found, verdict: undefined });
    continue;
  }
  const verdict = await check(found.source!, found.flags!, {
    randomSeed: 20_250_101,
    timeout: null,
    attackTimeout: null,
    incubationTimeout: null,
  });
  results.push({ found, verdict });
}
for (const { found, verdict } of results) {
  const key = `${found.file}: /${found.source ?? found.unresolved}/${found.flags ?? ''}`;
  seenKeys.add(key);
  const allowed = ALLOWLIST[key];
  if (verdict === undefined) {
    if (allowed) continue;
    failures++;
    console.error(
      `${found.file}:${found.line}: cannot evaluate ${found.unresolved} statically; build it from const strings or allowlist it with a reason.`,
    );
    continue;
  }
  checked++;
  if (verdict.status === 'safe') {
    if (allowed) {
      failures++;
      console.error(`${found.file}:${found.line}: allowlisted but safe: remove it from ALLOWLIST.`);
    }
    continue;
  }
  if (allowed) {
    console.log(`${found.file}:${found.line}: allowlisted (${allowed}): ${describe(verdict)}`);
    continue;
  }
  failures++;
  console.error(
    `${found.file}:${found.line}: /${found.source}/${found.flags} is ${describe(verdict)}`,
  );
}
for (const key of Object.keys(ALLOWLIST)) {
  if (!seenKeys.has(key)) {
    failures++;
    console.error(`allowlist entry no longer matches any pattern: ${key}`);
  }
}
console.log(
  `lint:redos: ${checked} regular expressions in ${files.length} files checked, ${failures} problem(s).`,
);
process.exit(failures > 0 ? 1 : 0);
