import { readFileSync, statSync } from 'node:fs';
import { dereference, validate } from '@readme/openapi-parser';
import { load as loadYaml } from 'js-yaml';
import { z } from 'zod';
import type { AuditLog } from '../audit/audit-log.js';
import { VeridexError } from '../errors/index.js';
import { lookAlike } from '../governance/safety-class-config.js';
import { jsonSchemaOf } from '../tools/json-schema.js';
import { DEFAULT_LOCK_FILE, LockFilePinStore } from '../tools/lock-file-pin-store.js';
import { settleReviews } from '../tools/pin-review.js';
import type { PinStore } from '../tools/pin-store.js';
import { RetryableToolError } from '../tools/retryable-tool-error.js';
import { createGovernedTool } from '../tools/tool.js';
import { assertNoNameClash } from '../tools/tool-name-key.js';
import { checkPins } from '../tools/tool-registry.js';
import {
  type AnyGovernedTool,
  SAFETY_CLASSES,
  type SafetyClass,
  type ToolDefinition,
} from '../tools/types.js';
import { unboundedPace } from './import-pace.js';
import {
  IMPORTED_DESCRIPTION_LIMIT,
  importedDescription,
  importJsonSchema,
  normalizeToolName,
} from './imported-metadata.js';
import { reviewListing } from './listing-review.js';
import { importedToolReview } from './model-view.js';
import {
  AUTO_SAFETY_CLASSES,
  HTTP_METHODS,
  type HttpMethod,
  type ParsedOperation,
  parseOperations,
} from './openapi-operation.js';
import {
  buildRequest,
  type OpenAPIAuth,
  type OperationInput,
  readCapped,
  reservedHeaders,
} from './openapi-request.js';
import { assertExpandedSize } from './openapi-schema.js';
import { serverUrlOf } from './openapi-servers.js';
import type { PoisoningKind } from './tool-poisoning.js';

/** Per-operation governance, keyed by `operationId`. */
export type OpenAPIOperationOverride = Partial<
  Pick<
    ToolDefinition<z.ZodType, z.ZodType>,
    'safetyClass' | 'approval' | 'idempotency' | 'retry' | 'timeoutMs'
  >
> & { name?: string };

/** Options for {@link fromOpenAPI}. */
export interface FromOpenAPIOptions {
  /** `'auto'` (default): GET/HEAD → read, POST/PUT/PATCH → write, DELETE → privileged; or a map. */
  safetyClassByMethod?: 'auto' | Partial<Record<HttpMethod, SafetyClass>>;
  /** Import only these `operationId`s (default: every usable operation). */
  operations?: readonly string[];
  /** Safety class, approval, idempotency, retry, timeout or name of single operations. */
  overrides?: Readonly<Record<string, OpenAPIOperationOverride>>;
  /** Server URL to call (default: the document's first server, variables at their defaults). */
  baseUrl?: string;
  /** Credentials, by secret name (the tools declare it; the model never sees it). */
  auth?: OpenAPIAuth;
  /** Prefix of the tool names, e.g. `payments_`. */
  prefix?: string;
  /** Lock file of pins (default `veridex.tools.lock.json`); `false` keeps no pins. */
  lockFile?: string | false;
  /** A pin store instead of the lock file. */
  pins?: PinStore;
  /** Re-pin these tool names after reviewing their change (never releases a hold). */
  accept?: readonly string[];
  /**
   * Release these tool names held for tool poisoning, after reviewing their findings
   * (`review.reasons`, also named by `schema_pin_mismatch` and `tool_review_required`).
   */
  acceptReview?: readonly string[];
  /** Where pin mismatches are reported (`security_event`). */
  audit?: AuditLog;
  maxDescriptionLength?: number;
  /** Per-call timeout (default 30 s). */
  timeoutMs?: number;
  /** Largest response body returned to the model; longer ones are cut (default 1 MiB). */
  maxResponseBytes?: number;
  /** Header carrying the call's idempotency key on POST/PUT/PATCH/DELETE (default `Idempotency-Key`; `false`: none). */
  idempotencyHeader?: string | false;
  /** Told about operations that cannot become tools (cookie parameters, binary bodies, recursive schemas). */
  onSkipped?: (operationId: string, reason: string) => void;
}

/** Largest document file read. */
export const MAX_OPENAPI_FILE_BYTES = 10 * 1024 * 1024;
/** Most nodes a document may expand to, `$ref`s and YAML aliases included (a bomb has billions). */
export const MAX_OPENAPI_NODES = 1_000_000;
const SAFE_METHODS = new Set(['get', 'head', 'options', 'trace']);

/**
 * Imports an OpenAPI 3.0 or 3.1 document (a `.json`/`.yaml` path or a parsed object) as
 * governed tools, one per operation, labelled `trust: 'imported'`:
 *
 * - the document is size-checked, validated and dereferenced by `@readme/openapi-parser`
 *   (`$ref`s inside the document only: external files and URLs are never fetched);
 * - each input is a zod schema `{ path, query, headers, body }` built from the parameters and
 *   the JSON (or form) request body, closed against extra fields, descriptions sanitised;
 * - the safety class follows the method (`auto`), overridable per operation;
 * - the tool reaches only its server's host (its `networkAllowlist`), through the sandbox's
 *   allowlisted HTTP client, with path values confined to one segment each;
 * - authentication comes from a `SecretRef` named in `auth` and is added after the model's
 *   input, which can never carry `Authorization`, cookies or the auth header;
 * - every tool is pinned (lock file by default): a document that changed an operation since
 *   it was pinned fails with `schema_pin_mismatch` and a `security_event`, like MCP.
 *
 * @throws VeridexError `import_invalid` (unreadable or invalid document, requested operation
 *   unusable), `import_too_large` (a file over 10 MiB, or more than {@link MAX_OPENAPI_NODES}
 *   nodes once `$ref`s, chains of `$ref`s and YAML aliases are expanded), `tool_name_clash`,
 *   `config_invalid`, `schema_pin_mismatch`.
 * @example const tools = await fromOpenAPI('./payments.yaml', { auth: { type: 'bearer', secret: 'PAYMENTS_KEY' } });
 */
export async function fromOpenAPI(
  spec: string | Record<string, unknown>,
  options: FromOpenAPIOptions = {},
): Promise<AnyGovernedTool[]> {
  const document = await loadDocument(spec);
  const idempotencyHeader =
    options.idempotencyHeader === false
      ? undefined
      : (options.idempotencyHeader ?? 'Idempotency-Key');
  const reserved = {
    headers: reservedHeaders(options.auth, idempotencyHeader),
    query: new Set(options.auth?.type === 'query' ? [options.auth.name] : []),
  };
  const wanted = options.operations ? new Set(options.operations) : undefined;
  const tools: AnyGovernedTool[] = [];
  const names = new Map<string, string>();
  const labels: Array<{ name: string; label: string }> = [];
  const operations = parseOperations(document, reserved);
  // The event loop runs between operations and between the listing's windows (no deadline:
  // the document is bounded in size and nodes before this).
  const pace = unboundedPace();
  checkOverrides(
    options,
    operations.map((operation) => operation.id),
  );
  for (const operation of operations) {
    if (wanted && !wanted.has(operation.id)) continue;
    if (operation.skip) {
      if (wanted) {
        throw new VeridexError(
          'import_invalid',
          `Operation "${operation.id}" cannot be imported: ${operation.skip}.`,
        );
      }
      options.onSkipped?.(operation.id, operation.skip);
      continue;
    }
    await pace.step();
    const tool = operationTool(operation, options, idempotencyHeader);
    names.set(tool.name, operation.id);
    labels.push({
      name: tool.name,
      label: `operation ${JSON.stringify(operation.id).slice(0, 80)}`,
    });
    tools.push(tool);
  }
  // Names that are one to a model (`get_doc`, `get-doc`, `Get.Doc`): rename with overrides.
  assertNoNameClash(labels);
  for (const id of wanted ?? []) {
    if (![...names.values()].includes(id)) {
      throw new VeridexError('import_invalid', `The document has no operation "${id}".`);
    }
  }
  // Each operation's tool scanned alone, then neighbours together, as the model reads them.
  const listed = await reviewListing(tools, pace);
  const store =
    options.pins ??
    (options.lockFile === false
      ? undefined
      : new LockFilePinStore(options.lockFile ?? DEFAULT_LOCK_FILE));
  const title = String((document.info as { title?: unknown } | undefined)?.title ?? 'untitled');
  const source = `openapi:${title.slice(0, 100)}`;
  if (store) {
    await checkPins(listed, store, {
      source,
      ...(options.accept ? { accept: options.accept } : {}),
      ...(options.audit ? { audit: options.audit } : {}),
    });
  }
  return settleReviews(listed, {
    store,
    acceptReview: options.acceptReview,
    audit: options.audit,
    source,
  });
}

async function loadDocument(
  spec: string | Record<string, unknown>,
): Promise<Record<string, unknown>> {
  let parsed: unknown = spec;
  if (typeof spec === 'string') {
    const size = (() => {
      try {
        return statSync(spec).size;
      } catch (error) {
        throw new VeridexError(
          'import_invalid',
          `Cannot read OpenAPI document ${spec}: ${(error as Error).message}`,
        );
      }
    })();
    if (size > MAX_OPENAPI_FILE_BYTES) {
      throw new VeridexError(
        'import_too_large',
        `OpenAPI document ${spec} is ${size} bytes; the limit is ${MAX_OPENAPI_FILE_BYTES}.`,
      );
    }
    const text = readFileSync(spec, 'utf8');
    try {
      parsed = /^\s*\{/.test(text) ? JSON.parse(text) : loadYaml(text);
    } catch (error) {
      throw new VeridexError(
        'import_invalid',
        `OpenAPI document ${spec} is neither JSON nor YAML: ${(error as Error).message}`,
      );
    }
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new VeridexError('import_invalid', 'An OpenAPI document must be an object.');
  }
  assertExpandedSize(parsed, MAX_OPENAPI_NODES);
  const version = String((parsed as { openapi?: unknown }).openapi ?? '');
  if (!/^3\.[01]\.\d+$/.test(version)) {
    throw new VeridexError(
      'import_invalid',
      `Only OpenAPI 3.0 and 3.1 documents are supported; got openapi ${JSON.stringify(version).slice(0, 40)}.`,
    );
  }
  // The parser mutates what it dereferences: give it a copy. External $refs stay unresolved.
  const parserOptions = { resolve: { external: false } } as const;
  const copy = structuredClone(parsed) as Parameters<typeof validate>[0];
  const result = await validate(structuredClone(copy), parserOptions);
  if (!result.valid) {
    const first = result.errors.slice(0, 3).map((error) => error.message.split('\n')[0]);
    throw new VeridexError('import_invalid', `Invalid OpenAPI document: ${first.join('; ')}.`);
  }
  return (await dereference(copy, parserOptions)) as unknown as Record<string, unknown>;
}

function operationTool(
  operation: ParsedOperation,
  options: FromOpenAPIOptions,
  idempotencyHeader: string | undefined,
): AnyGovernedTool {
  const override = options.overrides?.[operation.id] ?? {};
  const name = normalizeToolName(override.name ?? operation.id, options.prefix ?? '');
  const baseUrl = withoutTrailingSlashes(
    options.baseUrl ?? serverUrlOf(operation.servers, operation.id),
  );
  const host = new URL(baseUrl).hostname.replace(/^\[|\]$/g, '');
  const byMethod =
    options.safetyClassByMethod === undefined || options.safetyClassByMethod === 'auto'
      ? AUTO_SAFETY_CLASSES
      : { ...AUTO_SAFETY_CLASSES, ...options.safetyClassByMethod };
  const changes = !SAFE_METHODS.has(operation.method);
  const target = {
    method: operation.method,
    baseUrl,
    path: operation.path,
    ...(operation.body ? { body: operation.body } : {}),
    ...(changes && idempotencyHeader ? { idempotencyHeader } : {}),
  };
  const maxBytes = options.maxResponseBytes ?? 1024 * 1024;
  const auth = options.auth;
  // Kinds of tool-poisoning instructions found (and removed) in its description or parameters;
  // the whole view (name and every schema string included) is scanned once more below.
  const poisoning = new Set<PoisoningKind>();
  const description = importedDescription(
    operation.text,
    name,
    options.maxDescriptionLength ?? IMPORTED_DESCRIPTION_LIMIT,
    poisoning,
  );
  const input = importJsonSchema(
    operation.inputSchema,
    `OpenAPI operation "${operation.id}"`,
    poisoning,
  );
  const review = importedToolReview(
    { name, description, schemas: [jsonSchemaOf(input, 'input')] },
    poisoning,
  );
  return createGovernedTool(
    {
      name,
      description,
      safetyClass: override.safetyClass ?? byMethod[operation.method],
      input,
      output: z.string(),
      // Pinned with the tool: a document that points an operation elsewhere changes the hash.
      annotations: {
        openapi: {
          operationId: operation.id,
          method: operation.method.toUpperCase(),
          path: operation.path,
          server: baseUrl,
        },
        readOnlyHint: !changes,
        destructiveHint: operation.method === 'delete',
      },
      sandbox: { networkAllowlist: [host] },
      timeoutMs: override.timeoutMs ?? options.timeoutMs ?? 30_000,
      ...(auth ? { secrets: [auth.secret] } : {}),
      ...(override.approval ? { approval: override.approval } : {}),
      ...(override.idempotency ? { idempotency: override.idempotency } : {}),
      ...(override.retry ? { retry: override.retry } : {}),
      async execute({ input, http, secrets, idempotencyKey, signal }) {
        const request = buildRequest(target, input as OperationInput, {
          ...(auth ? { auth } : {}),
          secrets,
          idempotencyKey,
          signal,
        });
        const response = await http.fetch(request.url, request.init);
        const text = await readCapped(response, maxBytes);
        if (response.ok) return text;
        const message = `${operation.method.toUpperCase()} ${operation.path} answered HTTP ${response.status}: ${text.slice(0, 500)}`;
        // Rate limits and unavailable servers are worth a retry (with the same idempotency key).
        if (response.status === 429 || response.status === 503)
          throw new RetryableToolError(message);
        throw new Error(message);
      },
    },
    'imported',
    review,
  );
}

// A scan rather than /\/+$/, which backtracks quadratically on long runs of slashes.
function withoutTrailingSlashes(url: string): string {
  let end = url.length;
  while (end > 0 && url.charCodeAt(end - 1) === 0x2f) end--;
  return url.slice(0, end);
}

/**
 * Fail closed (README "Fail closed: no silent safety class"): an `overrides` key naming no
 * operation of the document (a typo would leave the operation at its method's class), a
 * `safetyClassByMethod` key that is not an HTTP method, and an unknown class are errors.
 */
function checkOverrides(options: FromOpenAPIOptions, ids: readonly string[]): void {
  const unknown = Object.keys(options.overrides ?? {}).filter((key) => !ids.includes(key));
  if (unknown.length > 0) {
    const hints = unknown
      .map((key) => [key, lookAlike(key, ids)] as const)
      .filter(([, near]) => near !== undefined)
      .map(([key, near]) => `${JSON.stringify(key)} looks like ${JSON.stringify(near)}`);
    throw new VeridexError(
      'config_invalid',
      `fromOpenAPI: overrides names ${unknown.map((key) => JSON.stringify(key)).join(', ')}, but the document has no such operationId (operations: ${ids.map((id) => JSON.stringify(id)).join(', ')}).${hints.length > 0 ? ` Did you mean: ${hints.join('; ')}?` : ''}`,
    );
  }
  for (const [id, override] of Object.entries(options.overrides ?? {})) {
    if (override.safetyClass !== undefined) {
      checkSafetyClass(override.safetyClass, `overrides[${JSON.stringify(id)}].safetyClass`);
    }
  }
  const byMethod = options.safetyClassByMethod;
  if (byMethod === undefined || byMethod === 'auto') return;
  if (typeof byMethod !== 'object' || byMethod === null) {
    throw new VeridexError(
      'config_invalid',
      `fromOpenAPI: safetyClassByMethod must be 'auto' or a map from HTTP method to safety class.`,
    );
  }
  for (const [method, safetyClass] of Object.entries(byMethod)) {
    if (!(HTTP_METHODS as readonly string[]).includes(method)) {
      throw new VeridexError(
        'config_invalid',
        `fromOpenAPI: safetyClassByMethod names ${JSON.stringify(method)}, not an HTTP method (${HTTP_METHODS.join(', ')}, lower case).`,
      );
    }
    checkSafetyClass(safetyClass, `safetyClassByMethod.${method}`);
  }
}

function checkSafetyClass(value: unknown, field: string): void {
  if (!SAFETY_CLASSES.includes(value as SafetyClass)) {
    throw new VeridexError(
      'config_invalid',
      `fromOpenAPI: ${field} must be one of ${SAFETY_CLASSES.join(', ')}; got ${JSON.stringify(String(value))}.`,
    );
  }
}
