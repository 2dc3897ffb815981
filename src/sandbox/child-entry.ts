import { spawn } from 'node:child_process';
import { existsSync, readFileSync, renameSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { VeridexError } from '../errors/index.js';
import {
  cacheDirectory,
  type FileIdentity,
  ownFile,
  recordDigest,
  sameIdentity,
  sha256,
  verifiedIdentity,
  writeVerified,
} from './snapshot-cache.js';

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
  /** Cached files a child starts from, as they were when their SHA-256 was checked. */
  verified: Array<{ path: string; identity: FileIdentity }>;
}

/** Which child to prepare. */
export interface ChildEntryOptions {
  startup: 'snapshot' | 'bundle' | 'module';
  /**
   * `guarded`: the in-process network and signal guard is loaded before the tool (for
   * `LocalProcessSandbox`); `isolated`: no guard, the kernel confines the child.
   */
  variant: 'guarded' | 'isolated';
  /** See `ProcessSandboxOptions.cacheDirectory`. */
  cacheDirectory?: string;
}

const TYPESCRIPT = /\.[cm]?tsx?$/;
const entries = new Map<string, Promise<ChildEntry>>();
type Esbuild = typeof import('esbuild');

/**
 * How to start a child for `moduleUrl`, prepared once per process (and cached on disk).
 *
 * With esbuild installed, the module is bundled with its dependencies into one CommonJS file,
 * and a V8 startup snapshot is built from it (`node --build-snapshot`, with an empty
 * environment): a child then starts with the tool already loaded, so a cold call costs about
 * one process spawn. The module's top-level code runs once, at snapshot time; per-call work
 * belongs in `execute`. If a snapshot cannot be built, the bundle runs as a script. Without
 * esbuild, JavaScript modules of a built application are imported by URL (slower: every
 * dependency loads per call); TypeScript modules need esbuild.
 *
 * Cached files live in a private directory (see `cacheDirectory`) and are checked against the
 * SHA-256 recorded when they were written; a file that fails the check is rebuilt. Before each
 * call the files' identities (inode, size, times) are compared with those checked: any change
 * means a new check.
 *
 * @throws VeridexError `config_invalid` when a TypeScript module cannot be bundled.
 */
export async function childEntryFor(
  moduleUrl: string,
  v8Flags: readonly string[],
  options: ChildEntryOptions,
): Promise<ChildEntry> {
  const moduleFile = fileURLToPath(moduleUrl);
  const cacheKey = [moduleFile, v8Flags.join(' '), options.startup, options.variant]
    .concat(options.cacheDirectory ?? [])
    .join('\0');
  const known = entries.get(cacheKey);
  if (known !== undefined) {
    const entry = await known;
    if (entry.verified.every(({ path, identity }) => unchanged(path, identity))) return entry;
    if (entries.get(cacheKey) === known) entries.delete(cacheKey);
    return childEntryFor(moduleUrl, v8Flags, options);
  }
  const entry = prepare(moduleUrl, moduleFile, v8Flags, options);
  entries.set(cacheKey, entry);
  entry.catch(() => entries.delete(cacheKey));
  return entry;
}

function unchanged(path: string, identity: FileIdentity): boolean {
  const now = ownFile(path);
  return now !== undefined && sameIdentity(now, identity);
}

async function prepare(
  moduleUrl: string,
  moduleFile: string,
  v8Flags: readonly string[],
  options: ChildEntryOptions,
): Promise<ChildEntry> {
  const here = fileURLToPath(import.meta.url);
  const fromSource = TYPESCRIPT.test(here);
  let esbuild: Esbuild | undefined;
  try {
    if (options.startup === 'module') throw new Error('module startup requested');
    esbuild = await import('esbuild');
  } catch (error) {
    if (fromSource || TYPESCRIPT.test(moduleFile)) {
      throw new VeridexError(
        'config_invalid',
        `A process sandbox needs esbuild to run the TypeScript tool module ${moduleFile}: install esbuild, or point sandbox.module at compiled JavaScript.`,
        { cause: error },
      );
    }
  }
  const sibling = (name: string) => join(dirname(here), `${name}${fromSource ? '.ts' : '.js'}`);
  if (esbuild === undefined) {
    const readPaths = [
      ...new Set([packageRoot(moduleFile), packageRoot(here), ...nodeModulesAbove(moduleFile)]),
    ];
    const main = options.variant === 'guarded' ? 'child-main' : 'isolated-child-main';
    return { args: [sibling(main)], module: moduleUrl, readPaths, mode: 'module', verified: [] };
  }
  const guarded = options.variant === 'guarded';
  const contents = [
    // The guard first: it must be in place before any code of the tool module runs. An isolated
    // child first closes the descriptors it inherited (descriptor-hygiene.ts): at import for a
    // bundle, in `main` for a snapshot (whose imports ran when it was built).
    ...(guarded
      ? [`import { configureNetworkGuard } from ${JSON.stringify(sibling('network-guard'))};`]
      : [
          `import ${JSON.stringify(sibling('close-inherited-descriptors'))};`,
          `import { closeInheritedDescriptors } from ${JSON.stringify(sibling('descriptor-hygiene'))};`,
        ]),
    `import * as toolModule from ${JSON.stringify(moduleFile)};`,
    `import { runChild } from ${JSON.stringify(sibling('child-runner'))};`,
    "import v8 from 'node:v8';",
    `const main = () => { ${guarded ? '' : 'closeInheritedDescriptors(); '}void runChild(async () => toolModule${guarded ? ', configureNetworkGuard' : ''}); };`,
    'if (v8.startupSnapshot.isBuildingSnapshot()) v8.startupSnapshot.setDeserializeMainFunction(main); else main();',
  ].join('\n');
  const code = await bundle(esbuild, contents, dirname(moduleFile));
  const directory = cacheDirectory(options.cacheDirectory);
  const key = sha256(`${code}\0${process.version}\0${process.execPath}`).slice(0, 32);
  const script = join(directory, `${key}.cjs`);
  const codeDigest = sha256(code);
  let scriptIdentity = verifiedIdentity(script);
  if (scriptIdentity === undefined || readDigest(script) !== codeDigest) {
    writeVerified(script, code);
    scriptIdentity = ownFile(script);
  }
  if (scriptIdentity === undefined) throw cacheUnusable(script);
  // A snapshot only loads under the V8 flags it was built with, so they are part of its name.
  const flagsKey = sha256(v8Flags.join(' ')).slice(0, 8);
  const blob = join(directory, `${key}-${flagsKey}.blob`);
  let blobIdentity = options.startup === 'snapshot' ? verifiedIdentity(blob) : undefined;
  if (options.startup === 'snapshot' && blobIdentity === undefined) {
    if (await buildSnapshot(script, blob, directory, v8Flags)) {
      recordDigest(blob);
      blobIdentity = ownFile(blob);
    }
  }
  if (blobIdentity !== undefined) {
    return {
      args: ['--snapshot-blob', blob],
      readPaths: [blob],
      mode: 'snapshot',
      verified: [{ path: blob, identity: blobIdentity }],
    };
  }
  return {
    args: [script],
    readPaths: [script],
    mode: 'bundle',
    verified: [{ path: script, identity: scriptIdentity }],
  };
}

function readDigest(path: string): string | undefined {
  try {
    return readFileSync(`${path}.sha256`, 'utf8');
  } catch {
    return undefined;
  }
}

function cacheUnusable(path: string): VeridexError {
  return new VeridexError(
    'config_invalid',
    `The sandbox cache file ${path} could not be written as a private file: check the cache directory.`,
  );
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
  // tool — and no call input exists yet. The environment is empty (and for LocalProcessSandbox
  // the network guard is on).
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
