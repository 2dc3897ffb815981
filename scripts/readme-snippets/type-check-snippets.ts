// Type-checks extracted snippets as real modules of this repository: each snippet is written as
// its own file into a generated directory beside a tsconfig.json that extends the repository's
// (strict, noUncheckedIndexedAccess, NodeNext, and `paths` mapping @veridex/langgraph to src/),
// and every diagnostic is mapped back to the Markdown line it came from.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import type { Snippet, SourceLine } from './extract-snippets.js';

/** A compiler error, placed on a Markdown line when it is in a snippet. */
export interface SnippetError {
  /** 1-based Markdown line, or undefined for an error outside every snippet. */
  markdownLine: number | undefined;
  /** Where an error outside the snippets is (a file of the repository, or the configuration). */
  location?: string;
  /** The TypeScript error code, e.g. 2339. */
  code: number;
  message: string;
}

/** Where to write the modules and which configuration they extend. */
export interface TypeCheckOptions {
  /** Absolute path of the directory to (re)create for the generated modules. */
  directory: string;
  /** Absolute path of the tsconfig.json whose settings the snippets are checked with. */
  baseConfig: string;
  /**
   * Modules the snippets' context may import, by the name they import them under: for
   * `{ 'readme-context.ts': '/repo/scripts/readme-snippets/readme-context.ts' }` a comment
   * imports `'./readme-context.js'`. Each is re-exported, not copied, so it is checked once.
   */
  sharedModules?: Readonly<Record<string, string>>;
}

/**
 * Writes each snippet (its context, then its code) as a module in `options.directory` and
 * type-checks them together. The directory is emptied first so no stale snippet is checked.
 * Only the snippets' own diagnostics (and global and configuration ones) are collected: the
 * library itself is type-checked by `tsc --noEmit`.
 */
export function typeCheckSnippets(snippets: Snippet[], options: TypeCheckOptions): SnippetError[] {
  rmSync(options.directory, { recursive: true, force: true });
  mkdirSync(options.directory, { recursive: true });
  if (snippets.length === 0) return [];

  const modules = new Map<string, SourceLine[]>();
  for (const snippet of snippets) {
    const path = join(options.directory, `readme-${snippet.fenceLine}.${snippet.language}`);
    // `export {}` makes a snippet without imports a module too: its own scope, top-level await.
    const lines = [...snippet.context, ...snippet.code];
    const closingFence = (snippet.code.at(-1)?.markdownLine ?? snippet.fenceLine) + 1;
    lines.push({ text: 'export {};', markdownLine: closingFence });
    modules.set(path, lines);
    writeFileSync(path, `${lines.map((line) => line.text).join('\n')}\n`);
  }
  for (const [name, target] of Object.entries(options.sharedModules ?? {})) {
    const specifier = relative(options.directory, target).replace(/\.tsx?$/, '.js');
    writeFileSync(join(options.directory, name), `export * from '${specifier}';\n`);
  }
  // Module format follows the nearest package.json; the cache may sit outside this package.
  writeFileSync(join(options.directory, 'package.json'), '{ "type": "module" }\n');
  const configPath = join(options.directory, 'tsconfig.json');
  const config = {
    extends: relative(options.directory, options.baseConfig),
    compilerOptions: { noEmit: true },
    files: [...modules.keys()].map((path) => relative(options.directory, path)),
    include: [],
  };
  writeFileSync(configPath, `${JSON.stringify(config, null, 2)}\n`);

  const program = createProgram(configPath);
  const diagnostics = [
    ...program.getConfigFileParsingDiagnostics(),
    ...program.getOptionsDiagnostics(),
    ...program.getGlobalDiagnostics(),
  ];
  for (const path of modules.keys()) {
    const sourceFile = program.getSourceFile(path);
    if (!sourceFile) throw new Error(`the compiler did not load ${path}`);
    diagnostics.push(
      ...program.getSyntacticDiagnostics(sourceFile),
      ...program.getSemanticDiagnostics(sourceFile),
    );
  }
  return diagnostics.map((diagnostic) => toSnippetError(diagnostic, modules, options.directory));
}

function createProgram(configPath: string): ts.Program {
  const parsed = ts.getParsedCommandLineOfConfigFile(configPath, undefined, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
      throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
    },
  });
  if (!parsed) throw new Error(`could not read ${configPath}`);
  return ts.createProgram({
    rootNames: parsed.fileNames,
    options: parsed.options,
    configFileParsingDiagnostics: parsed.errors,
  });
}

function toSnippetError(
  diagnostic: ts.Diagnostic,
  modules: Map<string, SourceLine[]>,
  directory: string,
): SnippetError {
  const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n  ');
  const { file, start } = diagnostic;
  if (!file || start === undefined)
    return { markdownLine: undefined, code: diagnostic.code, message };
  const { line } = file.getLineAndCharacterOfPosition(start);
  const lines = modules.get(file.fileName) ?? modules.get(ts.sys.resolvePath(file.fileName));
  if (lines) return { markdownLine: lines[line]?.markdownLine, code: diagnostic.code, message };
  return {
    markdownLine: undefined,
    location: `${relative(directory, file.fileName)}:${line + 1}`,
    code: diagnostic.code,
    message,
  };
}
