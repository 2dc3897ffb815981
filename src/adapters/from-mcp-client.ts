import { z } from 'zod';
import type { AuditLog } from '../audit/audit-log.js';
import { VeridexError } from '../errors/index.js';
import { jsonSchemaOf } from '../tools/json-schema.js';
import { DEFAULT_LOCK_FILE, LockFilePinStore } from '../tools/lock-file-pin-store.js';
import { settleReviews } from '../tools/pin-review.js';
import type { PinStore } from '../tools/pin-store.js';
import { createGovernedTool } from '../tools/tool.js';
import { assertNoNameClash } from '../tools/tool-name-key.js';
import { checkPins } from '../tools/tool-registry.js';
import type { AnyGovernedTool, SafetyClass, ToolSandboxSpec } from '../tools/types.js';
import {
  classWithAnnotations,
  IMPORTED_DESCRIPTION_LIMIT,
  importedAnnotations,
  importedDescription,
  importJsonSchema,
  normalizeToolName,
} from './imported-metadata.js';
import { reviewListing } from './listing-review.js';
import { listMcpTools, type McpListLimits, mcpImportPace } from './mcp-listing.js';
import type { McpClientLike } from './mcp-types.js';
import { importedToolReview } from './model-view.js';
import type { PoisoningKind } from './tool-poisoning.js';

/** A tool as an MCP server lists it. */
export interface McpToolInfo {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
}

/** Options for {@link fromMcpClient}. */
export interface FromMcpClientOptions {
  /** Required: each tool's class (annotations may raise it, never lower it). */
  safetyClassFor: SafetyClass | ((tool: McpToolInfo) => SafetyClass);
  /** Lock file of pins (default `veridex.tools.lock.json`); `false` keeps pins in `pins` only. */
  lockFile?: string | false;
  /** A pin store instead of the lock file (e.g. `PostgresPinStore`). */
  pins?: PinStore;
  /** Re-pin these (normalised) names after reviewing their change (never releases a hold). */
  accept?: readonly string[];
  /**
   * Release these (normalised) names held for tool poisoning, after reviewing their findings
   * (`review.reasons`, also named by `schema_pin_mismatch` and `tool_review_required`).
   */
  acceptReview?: readonly string[];
  /** Prefix for the governed names, e.g. `github_`. */
  prefix?: string;
  /** Which listed tools to import (default all). */
  include?: (tool: McpToolInfo) => boolean;
  /** Where pin mismatches are reported (`security_event`). */
  audit?: AuditLog;
  maxDescriptionLength?: number;
  /** Per-call timeout (also the governed `timeoutMs`). */
  timeoutMs?: number;
  sandbox?: ToolSandboxSpec;
  /**
   * Bounds on the listing (defaults: 100 pages, 1000 tools, 8 MiB of pages counted whole, 30 s); a server
   * past one fails the import with `import_too_large`.
   */
  limits?: McpListLimits;
}

/**
 * Imports an MCP server's tools (through a connected `Client` of `@modelcontextprotocol/sdk`)
 * as governed tools labelled `trust: 'imported'`: names normalised (and prefixed), descriptions
 * and schemas sanitised, annotations pinned (a `destructiveHint` raises the class to at least
 * `write`; `readOnlyHint` never lowers it). Every tool's schema hash is checked against the pin
 * store — a lock file by default — so a server that changes a tool after it was pinned (a "rug
 * pull") fails the import with `schema_pin_mismatch` and a `security_event`; unknown tools are
 * pinned on first use.
 *
 * The listing is bounded (`limits`: pages, tools, bytes, time) and yields to the event loop
 * between pages; the work on what it lists (each tool's schemas and poisoning scan, the
 * listing's windows) yields between tools and windows and runs under the same deadline
 * (`listTimeoutMs`, then `import_too_large`); two tools whose names normalise to one (`get.doc2`, `get_doc2`, `Get-Doc2`)
 * fail the import with `tool_name_clash`.
 *
 * @throws VeridexError `schema_pin_mismatch`, `import_invalid`, `import_too_large`,
 *   `tool_name_clash`, `config_invalid`.
 * @example const tools = await fromMcpClient(client, { safetyClassFor: (t) => (t.annotations?.readOnlyHint ? 'read' : 'write') });
 */
export async function fromMcpClient(
  client: McpClientLike,
  options: FromMcpClientOptions,
): Promise<AnyGovernedTool[]> {
  if (options.safetyClassFor === undefined) {
    throw new VeridexError(
      'config_invalid',
      'fromMcpClient needs safetyClassFor: a class, or a function from the listed tool to its class.',
    );
  }
  // One deadline (`limits.listTimeoutMs`) for the listing and for the work on what it lists.
  const pace = mcpImportPace(options.limits);
  const listed = (await listMcpTools(client, options.limits, pace)) as McpToolInfo[];
  const server = client.getServerVersion()?.name ?? 'unknown';
  const included = listed.filter((info) => options.include?.(info) ?? true);
  assertNoNameClash(
    included.map((info) => ({
      name: normalizeToolName(info?.name, options.prefix ?? ''),
      label: `MCP tool ${JSON.stringify(String(info?.name)).slice(0, 80)}`,
    })),
  );
  // Each tool scanned alone, then neighbours together, as the model reads the listing; the
  // event loop runs between tools and windows, and the deadline holds throughout.
  const governed: AnyGovernedTool[] = [];
  for (const info of included) {
    await pace.step();
    governed.push(governedMcpTool(client, info, options));
  }
  const tools = await reviewListing(governed, pace);
  await pace.step();
  const store =
    options.pins ??
    (options.lockFile === false
      ? undefined
      : new LockFilePinStore(options.lockFile ?? DEFAULT_LOCK_FILE));
  if (store) {
    await checkPins(tools, store, {
      source: `mcp:${server}`,
      ...(options.accept ? { accept: options.accept } : {}),
      ...(options.audit ? { audit: options.audit } : {}),
    });
  }
  return settleReviews(tools, {
    store,
    acceptReview: options.acceptReview,
    audit: options.audit,
    source: `mcp:${server}`,
  });
}

function governedMcpTool(
  client: McpClientLike,
  info: McpToolInfo,
  options: FromMcpClientOptions,
): AnyGovernedTool {
  const name = normalizeToolName(info.name, options.prefix ?? '');
  // Kinds of tool-poisoning instructions found (and removed) in any of its texts.
  const poisoning = new Set<PoisoningKind>();
  const annotations = importedAnnotations(
    { ...info.annotations, ...(info.title ? { title: info.title } : {}) },
    poisoning,
  );
  const given =
    typeof options.safetyClassFor === 'function'
      ? options.safetyClassFor(info)
      : options.safetyClassFor;
  const where = `MCP tool "${info.name}"`;
  const structured = info.outputSchema !== undefined;
  const description = importedDescription(
    info.description,
    name,
    options.maxDescriptionLength ?? IMPORTED_DESCRIPTION_LIMIT,
    poisoning,
  );
  const input = importJsonSchema(info.inputSchema, where, poisoning);
  const output = structured
    ? importJsonSchema(info.outputSchema, `${where} output`, poisoning)
    : z.string();
  // Everything the model reads of the tool, scanned once more as one text.
  const review = importedToolReview(
    {
      name,
      title: annotations?.title,
      description,
      schemas: [
        jsonSchemaOf(input, 'input'),
        ...(structured ? [jsonSchemaOf(output, 'output')] : []),
      ],
    },
    poisoning,
  );
  return createGovernedTool(
    {
      name,
      description,
      safetyClass: classWithAnnotations(given, annotations),
      input,
      output,
      ...(annotations ? { annotations } : {}),
      ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
      ...(options.sandbox ? { sandbox: options.sandbox } : {}),
      async execute({ input, signal }) {
        const result = (await client.callTool(
          { name: info.name, arguments: input as Record<string, unknown> },
          undefined,
          {
            signal,
            ...(options.timeoutMs ? { timeout: options.timeoutMs } : {}),
          },
        )) as { content?: unknown; isError?: unknown; structuredContent?: unknown };
        const text = contentText(result.content);
        if (result.isError) throw new Error(text || `MCP tool ${info.name} reported an error.`);
        return structured ? result.structuredContent : text;
      },
    },
    'imported',
    review,
  );
}

// Text blocks as they are; other blocks described, never fetched.
function contentText(content: unknown): string {
  if (!Array.isArray(content)) return '';
  return content
    .map((block: Record<string, unknown>) => {
      switch (block?.type) {
        case 'text':
          return String(block.text ?? '');
        case 'image':
        case 'audio':
          return `[${block.type} ${String(block.mimeType ?? '')}]`;
        case 'resource':
          return `[resource ${String((block.resource as { uri?: unknown })?.uri ?? '')}]`;
        case 'resource_link':
          return `[resource ${String(block.uri ?? '')}]`;
        default:
          return '';
      }
    })
    .filter((part) => part.length > 0)
    .join('\n');
}
