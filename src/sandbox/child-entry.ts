import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { VeridexError } from '../errors/index.js';

/** How to start a child for one tool module. */
export interface ChildEntry {
  /** Arguments after the sandbox flags: a script, or `--snapshot-blob <file>`. */
  args: string[];
  /** `module` to send in the request (only when the child imports the module by URL). */
  module?: string;
  /** What the child must be able to read. */
  readPaths: string[];
  /** `snapshot`: heap snapshot with the module loaded; `bundle`: one file; `module`: plain import. */
  mode: 'snapshot' | 'bundle' | 'module';
}

const TYPESCRIPT = /\.[cm]?tsx?$/;
const entries = new Map<string, Promise<ChildEntry>>();
type Esbuild = typeof import('esbuild');

/**
 * How to start a child for `moduleUrl`, prepared once per process (and cached on disk).
 *
 * With esbuild installed, the module is bundled with its dependencies into one CommonJS file,
 * and a V8 startup snapshot is built from it (`node --build-snapshot`, with an empty
 * environment and the network guard on): a child then starts with the tool already
 * loaded, so a cold call costs about one process spawn. The module's top-level code runs once,
 * at snapshot time; per-call work belongs in `execute`. If a snapshot cannot be built, the
 * bundle runs as a script. Without esbuild, JavaScript modules of a built application are
 * imported by URL (slower: every dependency loads per call); TypeScript modules need esbuild.
 *
 * @throws VeridexError `config_invalid` when a TypeScript module cannot be bundled.
 */
export function childEntryFor(
  moduleUrl: string,
  v8Flags: readonly string[],
  startup: 'snapshot' | 'bundle' | 'module' = 'snapshot',
): Promise<ChildEntry> {
  const moduleFile = fileURLToPath(moduleUrl);
  const cacheKey = `${moduleFile}\0${v8Flags.join(' ')}\0${startup}`;
  let entry = entries.get(cacheKey);
  if (entry === undefined) {
    entry = prepare(moduleUrl, moduleFile, v8Flags, startup);
    entries.set(cacheKey, entry);
    entry.catch(() => entries.delete(cacheKey));
  }
  return entry;
}

async function prepare(
  moduleUrl: string,
  moduleFile: string,
  v8Flags: readonly string[],
  startup: 'snapshot' | 'bundle' | 'module',
): Promise<ChildEntry> {
  const here = fileURLToPath(import.meta.url);
  const fromSource = TYPESCRIPT.test(here);
  let esbuild: Esbuild | undefined;
  try {
    if (startup === 'module') throw new Error('module startup requested');
    esbuild = await import('esbuild');
  } catch (error) {
    if (fromSource || TYPESCRIPT.test(moduleFile)) {
      throw new VeridexError(
        'config_invalid',
        `LocalProcessSandbox needs esbuild to run the TypeScript tool module ${moduleFile}: install esbuild, or point sandbox.module at compiled JavaScript.`,
        { cause: error },
      );
    }
  }
  if (esbuild === undefined) {
    const readPaths = [
      ...new Set([packageRoot(moduleFile), packageRoot(here), ...nodeModulesAbove(moduleFile)]),
    ];
    return {
      args: [join(dirname(here), 'child-main.js')],
      module: moduleUrl,
      readPaths,
      mode: 'module',
    };
  }
  const sibling = (name: string) => join(dirname(here), `${name}${fromSource ? '.ts' : '.js'}`);
  const contents = [
    // The guard first: it must be in place before any code of the tool module runs.
    `import ${JSON.stringify(sibling('network-guard'))};`,
    `import * as toolModule from ${JSON.stringify(moduleFile)};`,
    `import { runChild } from ${JSON.stringify(sibling('child-runner'))};`,
    "import v8 from 'node:v8';",
    'const main = () => { void runChild(async () => toolModule); };',
    'if (v8.startupSnapshot.isBuildingSnapshot()) v8.startupSnapshot.setDeserializeMainFunction(main); else main();',
  ].join('\n');
  const code = await bundle(esbuild, contents, dirname(moduleFile));
  const directory = join(tmpdir(), `veridex-sandbox-${process.getuid?.() ?? 'user'}`);
  mkdirSync(directory, { recursive: true, mode: 0o700 });
  const key = createHash('sha256')
    .update(code)
    .update(process.version)
    .update(process.execPath)
    .digest('hex')
    .slice(0, 32);
  const script = join(directory, `${key}.cjs`);
  if (!existsSync(script)) writeAtomically(script, code);
  // A snapshot only loads under the V8 flags it was built with, so they are part of its name.
  const flagsKey = createHash('sha256').update(v8Flags.join(' ')).digest('hex').slice(0, 8);
  const blob = join(directory, `${key}-${flagsKey}.blob`);
  const snapshot =
    startup === 'snapshot' &&
    (existsSync(blob) || (await buildSnapshot(script, blob, directory, v8Flags)));
  if (snapshot) {
    return { args: ['--snapshot-blob', blob], readPaths: [blob], mode: 'snapshot' };
  }
  return { args: [script], readPaths: [script], mode: 'bundle' };
}

async function bundle(esbuild: Esbuild, contents: string, resolveDir: string): Promise<string> {
  const result = await esbuild.build({
    stdin: { contents, resolveDir, sourcefile: 'veridex-child-entry.mjs', loader: 'js' },
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    write: false,
    minifyWhitespace: true,
    minifySyntax: true,
    logLevel: 'silent',
    // Only the parent bundles; a module that imports this package must not drag esbuild in.
    external: ['esbuild'],
    define: { 'import.meta.url': '__veridexModuleUrl' },
    banner: {
      js: "const __veridexModuleUrl = require('node:url').pathToFileURL(__filename).href;",
    },
  });
  return result.outputFiles[0]!.text;
}

function buildSnapshot(
  script: string,
  blob: string,
  directory: string,
  v8Flags: readonly string[],
): Promise<boolean> {
  const temporary = `${blob}.${process.pid}.tmp`;
  // Not under the permission model: a snapshot built with it cannot be started with it
  // (Node 20 defines process.permission twice). This adds no exposure: the build only
  // evaluates the module's top-level code, which the parent already ran when it imported the
  // tool — and no call input exists yet. The environment is empty and the network guard is on.
  const args = [
    ...v8Flags,
    '--no-warnings',
    '--snapshot-blob',
    temporary,
    '--build-snapshot',
    script,
  ];
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd: directory, env: {}, stdio: 'ignore' });
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', () => resolve(false));
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code !== 0 || !existsSync(temporary)) return resolve(false);
      renameSync(temporary, blob);
      resolve(true);
    });
  });
}

function writeAtomically(path: string, text: string): void {
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, text, { mode: 0o600 });
  renameSync(temporary, path);
}

function packageRoot(file: string): string {
  for (let directory = dirname(file); ; directory = dirname(directory)) {
    if (existsSync(join(directory, 'package.json'))) return directory;
    if (dirname(directory) === directory) return dirname(file);
  }
}

function nodeModulesAbove(file: string): string[] {
  const found: string[] = [];
  for (
    let directory = dirname(file);
    dirname(directory) !== directory;
    directory = dirname(directory)
  ) {
    if (existsSync(join(directory, 'node_modules'))) found.push(join(directory, 'node_modules'));
  }
  return found;
}
