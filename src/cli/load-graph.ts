import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ThreadGraph } from '../adapters/index.js';
import { UsageError } from './io.js';

/** `--graph` help text shared by the commands that load an application's graph. */
export const GRAPH_OPTION_HELP = `  --graph MODULE#EXPORT  your compiled graph: MODULE is a file path resolved from the
                         current directory, EXPORT the export holding the compiled graph or a
                         (sync or async) factory returning it (default export: "default").
                         The module is imported and runs with your privileges: name only
                         modules you trust.`;

function isThreadGraph(value: unknown): value is ThreadGraph {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as ThreadGraph).getState === 'function' &&
    typeof (value as ThreadGraph).updateState === 'function'
  );
}

/**
 * Loads `MODULE#EXPORT`: imports the module (its top-level code runs) and returns the compiled
 * graph it exports, calling the export first when it is a factory.
 * @throws UsageError when the module cannot be imported or the export is not a compiled graph.
 */
export async function loadGraph(spec: string, cwd = process.cwd()): Promise<ThreadGraph> {
  const hash = spec.lastIndexOf('#');
  const modulePath = hash >= 0 ? spec.slice(0, hash) : spec;
  const exportName = hash >= 0 ? spec.slice(hash + 1) : 'default';
  if (!modulePath || !exportName)
    throw new UsageError(`--graph expects MODULE#EXPORT, got "${spec}"`);
  let module: Record<string, unknown>;
  try {
    module = (await import(pathToFileURL(resolve(cwd, modulePath)).href)) as Record<
      string,
      unknown
    >;
  } catch (error) {
    throw new UsageError(`cannot import ${modulePath}: ${(error as Error).message}`);
  }
  if (!(exportName in module)) {
    throw new UsageError(`${modulePath} has no export "${exportName}"`);
  }
  let value = module[exportName];
  if (!isThreadGraph(value) && typeof value === 'function') value = await value();
  if (!isThreadGraph(value)) {
    throw new UsageError(
      `${modulePath}#${exportName} is neither a compiled graph nor a factory returning one (compile it with a checkpointer)`,
    );
  }
  return value;
}
