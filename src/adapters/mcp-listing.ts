import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { VeridexError } from '../errors/index.js';
import { ImportPace } from './import-pace.js';
import type { McpClientLike } from './mcp-types.js';

/** Bounds on listing an MCP server's tools (README "Converters"); raise them by name. */
export interface McpListLimits {
  /** Most `tools/list` pages followed (default 100). */
  maxPages?: number;
  /** Most tools listed in all (default 1000). */
  maxTools?: number;
  /** Most bytes of listing pages (as JSON, every field) in all (default 8 MiB). */
  maxBytes?: number;
  /** Longest the whole listing may take, in milliseconds (default 30 s). */
  listTimeoutMs?: number;
}

/** The defaults of {@link McpListLimits}. */
export const DEFAULT_MCP_LIST_LIMITS: Readonly<Required<McpListLimits>> = Object.freeze({
  maxPages: 100,
  maxTools: 1000,
  maxBytes: 8 * 1024 * 1024,
  listTimeoutMs: 30_000,
});

/**
 * The pace of one MCP import (see `ImportPace`): its deadline is `listTimeoutMs` from now, and
 * both the listing and the work on what it lists (schemas, the poisoning scan) run under it;
 * passing it fails the import with `import_too_large`. Validates `limits` first.
 *
 * @throws VeridexError `config_invalid` (a limit that is not a positive integer).
 */
export function mcpImportPace(limits: McpListLimits = {}): ImportPace {
  const bounds = listBounds(limits);
  return new ImportPace(performance.now() + bounds.listTimeoutMs, () =>
    tooLargeList(bounds, `took longer than ${bounds.listTimeoutMs} ms to list and review`),
  );
}

function listBounds(limits: McpListLimits): Required<McpListLimits> {
  const bounds = { ...DEFAULT_MCP_LIST_LIMITS, ...limits };
  for (const [name, value] of Object.entries(bounds)) {
    if (!Number.isSafeInteger(value) || value < 1) {
      throw new VeridexError('config_invalid', `limits.${name} must be a positive integer.`);
    }
  }
  return bounds;
}

function tooLargeList(bounds: Required<McpListLimits>, what: string): never {
  throw new VeridexError(
    'import_too_large',
    `The MCP server's tool list ${what}; refusing it. Raise fromMcpClient's limits if the server is trusted to be that large.`,
    { details: bounds },
  );
}

/**
 * Every tool an MCP server lists, following `nextCursor` within bounds: a server that answers
 * a fresh cursor forever, huge pages or slow pages makes the import fail with
 * `import_too_large` at the first bound crossed, not run for minutes or exhaust the heap. The
 * loop yields to the event loop between pages (an in-memory or fast transport would otherwise
 * starve timers), passes the time left to each request, and refuses a cursor the server gave
 * before (a loop) with `import_invalid`. The time bound is `pace`'s deadline (by default
 * `listTimeoutMs` from now), which the importer's later work shares.
 *
 * @throws VeridexError `import_too_large`, `import_invalid`, `config_invalid` (a bad limit).
 */
export async function listMcpTools(
  client: McpClientLike,
  limits: McpListLimits = {},
  pace: ImportPace = mcpImportPace(limits),
): Promise<unknown[]> {
  const bounds = listBounds(limits);
  const tooLarge = (what: string): never => tooLargeList(bounds, what);
  const { deadline } = pace;
  const cursors = new Set<string>();
  const listed: unknown[] = [];
  let bytes = 0;
  let cursor: string | undefined;
  for (let pages = 0; ; ) {
    if (pages >= bounds.maxPages) tooLarge(`runs past ${bounds.maxPages} pages`);
    const left = Math.ceil(deadline - performance.now());
    if (left <= 0) tooLarge(`took longer than ${bounds.listTimeoutMs} ms`);
    // Our signal is the deadline; the client's own timer is only a backstop a little later, so
    // that a page cut off in time is always recognised below (timers may fire up to a
    // millisecond before performance.now() reaches the deadline).
    const signal = AbortSignal.timeout(left);
    const page = await client
      .listTools(cursor === undefined ? undefined : { cursor }, {
        signal,
        timeout: left + 1000,
      })
      .catch((error: unknown) => {
        // A page cut off by the deadline is the time bound, not a transport failure.
        if (signal.aborted || performance.now() >= deadline) {
          tooLarge(`took longer than ${bounds.listTimeoutMs} ms`);
        }
        throw error;
      });
    pages++;
    // The whole page counts, every field of it (`_meta`, fields the server made up), in UTF-8
    // bytes: a page is held in memory whatever part of it the import reads.
    bytes += pageBytes(page);
    const tools = Array.isArray(page?.tools) ? page.tools : [];
    if (bytes > bounds.maxBytes) tooLarge(`holds more than ${bounds.maxBytes} bytes`);
    if (listed.length + tools.length > bounds.maxTools) {
      tooLarge(`holds more than ${bounds.maxTools} tools`);
    }
    listed.push(...tools);
    cursor =
      typeof page?.nextCursor === 'string' && page.nextCursor !== '' ? page.nextCursor : undefined;
    if (cursor === undefined) return listed;
    if (cursors.has(cursor) || cursor.length > 4096) {
      throw new VeridexError(
        'import_invalid',
        `The MCP server's tool list loops (cursor ${JSON.stringify(cursor.slice(0, 40))} came twice) or its cursor is oversized; refusing it.`,
      );
    }
    cursors.add(cursor);
    // Let timers and I/O run: a transport that answers in microtasks would otherwise hold the
    // process for the whole listing.
    await yieldToEventLoop();
  }
}

// The page as JSON in UTF-8. The client hands over parsed JSON; a page that cannot be
// serialised (a cycle, a BigInt from a custom client) is no listing at all.
function pageBytes(page: unknown): number {
  let text: string | undefined;
  try {
    text = JSON.stringify(page);
  } catch (error) {
    throw new VeridexError(
      'import_invalid',
      `The MCP server's tool list page is not JSON (${(error as Error).message}); refusing it.`,
      { cause: error },
    );
  }
  return text === undefined ? 0 : Buffer.byteLength(text, 'utf8');
}
