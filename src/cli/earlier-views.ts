import { readFileSync } from 'node:fs';
import { readHeadFile } from '../audit/index.js';
import { UsageError } from './io.js';

/** One earlier view of a thread named on the command line: an older bundle or a signed head. */
export interface EarlierViewInput {
  /** `file` for a bundle or head file, `file:line` for a line of a head file. */
  label: string;
  value: unknown;
}

/**
 * Reads `--since` files: an evidence bundle or one signed tree head (JSON), or a witness head
 * file (JSON lines), of which the heads of `threadId` are kept (global heads are checked against
 * a database, with `veridex audit verify`).
 * @throws UsageError when the file cannot be read.
 */
export function readEarlierViews(path: string, threadId: string | undefined): EarlierViewInput[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read ${path}: ${(error as NodeJS.ErrnoException).code}`);
  }
  try {
    return [{ label: path, value: JSON.parse(text) }];
  } catch {
    // Not one JSON document: a head file, one head per line.
  }
  return readHeadFile(path)
    .filter((entry) => {
      const head = entry.value as { scope?: unknown; threadId?: unknown } | undefined;
      return (
        head?.scope !== 'global' && (head?.threadId === undefined || head.threadId === threadId)
      );
    })
    .map((entry) => ({ label: `${path}:${entry.line}`, value: entry.value }));
}
