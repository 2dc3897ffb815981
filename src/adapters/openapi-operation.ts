import type { SafetyClass } from '../tools/types.js';
import type { BodyEncoding } from './openapi-request.js';
import { toInputJsonSchema, UnusableSchemaError } from './openapi-schema.js';

/** HTTP methods an OpenAPI path item can hold. */
export const HTTP_METHODS = [
  'get',
  'put',
  'post',
  'delete',
  'options',
  'head',
  'patch',
  'trace',
] as const;

/** One of {@link HTTP_METHODS}. */
export type HttpMethod = (typeof HTTP_METHODS)[number];

/** `safetyClassByMethod: 'auto'`: reads are `read`, changes `write`, deletions `privileged`. */
export const AUTO_SAFETY_CLASSES: Readonly<Record<HttpMethod, SafetyClass>> = Object.freeze({
  get: 'read',
  head: 'read',
  options: 'read',
  trace: 'read',
  post: 'write',
  put: 'write',
  patch: 'write',
  delete: 'privileged',
});

/** An operation of the document, ready to become a tool (or the reason it cannot). */
export interface ParsedOperation {
  /** `operationId`, or `method_path` when the document gives none. */
  id: string;
  method: HttpMethod;
  path: string;
  /** Summary and description, raw (sanitised later). */
  text: string;
  /** Server URLs of the operation, path item or document, in that precedence. */
  servers: unknown[];
  inputSchema?: Record<string, unknown>;
  body?: BodyEncoding;
  skip?: string;
}

type Json = Record<string, unknown>;
const GROUPS = { path: 'path', query: 'query', header: 'headers' } as const;

/**
 * Reads every operation of a dereferenced OpenAPI 3.0/3.1 document. Each becomes a JSON
 * Schema input `{ path, query, headers, body }` (groups present only when the operation has
 * such parameters; `additionalProperties: false` everywhere the document does not say
 * otherwise). Cookie parameters, non-JSON/form bodies and schemas that cannot be inlined mark
 * the operation `skip` with the reason. `reserved` headers and query names never become input.
 */
export function parseOperations(
  document: Json,
  reserved: { headers: Set<string>; query: Set<string> },
): ParsedOperation[] {
  const openapi30 = String(document.openapi ?? '').startsWith('3.0');
  const operations: ParsedOperation[] = [];
  for (const [path, item] of Object.entries((document.paths ?? {}) as Record<string, Json>)) {
    if (typeof item !== 'object' || item === null) continue;
    for (const method of HTTP_METHODS) {
      const operation = item[method] as Json | undefined;
      if (typeof operation !== 'object' || operation === null) continue;
      const parsed: ParsedOperation = {
        id: typeof operation.operationId === 'string' ? operation.operationId : `${method}_${path}`,
        method,
        path,
        text: [operation.summary, operation.description]
          .filter((part) => typeof part === 'string' && part.trim() !== '')
          .join('\n\n'),
        servers: firstServers(operation.servers, item.servers, document.servers),
      };
      try {
        Object.assign(parsed, inputOf(item, operation, openapi30, reserved));
      } catch (error) {
        if (!(error instanceof UnusableSchemaError)) throw error;
        parsed.skip = error.message;
      }
      operations.push(parsed);
    }
  }
  return operations;
}

function firstServers(...candidates: unknown[]): unknown[] {
  return (
    (candidates.find((servers) => Array.isArray(servers) && servers.length > 0) as unknown[]) ?? []
  );
}

function inputOf(
  item: Json,
  operation: Json,
  openapi30: boolean,
  reserved: { headers: Set<string>; query: Set<string> },
): Pick<ParsedOperation, 'inputSchema' | 'body'> {
  const budget = { nodes: 20_000 };
  // Operation parameters override path-item ones with the same name and location.
  const parameters = new Map<string, Json>();
  for (const parameter of [...asArray(item.parameters), ...asArray(operation.parameters)]) {
    parameters.set(`${parameter.in}:${parameter.name}`, parameter);
  }
  const groups: Record<string, { properties: Json; required: string[] }> = {};
  for (const parameter of parameters.values()) {
    const location = String(parameter.in);
    const name = String(parameter.name);
    if (location === 'cookie') throw new UnusableSchemaError('it takes cookie parameters');
    const group = GROUPS[location as keyof typeof GROUPS];
    if (!group) continue;
    if (group === 'headers' && reserved.headers.has(name.toLowerCase())) continue;
    if (group === 'query' && reserved.query.has(name)) continue;
    let schema = toInputJsonSchema(
      parameter.schema ?? { type: 'string' },
      openapi30,
      budget,
    ) as Json;
    if (typeof parameter.description === 'string' && schema.description === undefined) {
      schema = { ...schema, description: parameter.description };
    }
    // Header values travel on one line: CR/LF would split the request.
    if (group === 'headers') schema = { ...schema, type: 'string', pattern: '^[^\\r\\n]*$' };
    groups[group] ??= { properties: {}, required: [] };
    groups[group].properties[name] = schema;
    if (parameter.required === true || location === 'path') groups[group].required.push(name);
  }
  const properties: Json = {};
  const required: string[] = [];
  for (const [group, { properties: groupProperties, required: groupRequired }] of Object.entries(
    groups,
  )) {
    properties[group] = { type: 'object', properties: groupProperties, required: groupRequired };
    if (groupRequired.length > 0) required.push(group);
  }
  const requestBody = operation.requestBody as Json | undefined;
  let body: BodyEncoding | undefined;
  if (requestBody && typeof requestBody === 'object') {
    const content = (requestBody.content ?? {}) as Record<string, Json>;
    const json = Object.keys(content).find((type) =>
      /^application\/([\w.-]+\+)?json\b/i.test(type),
    );
    const form = Object.keys(content).find((type) =>
      /^application\/x-www-form-urlencoded\b/i.test(type),
    );
    const chosen = json ?? form;
    if (!chosen) {
      throw new UnusableSchemaError(
        `its request body is ${Object.keys(content).join(', ') || 'of no media type'} (only JSON and form bodies are supported)`,
      );
    }
    body = json ? 'json' : 'form';
    properties.body = toInputJsonSchema(
      content[chosen]?.schema ?? { type: 'object' },
      openapi30,
      budget,
    );
    if (requestBody.required === true) required.push('body');
  }
  return {
    inputSchema: { type: 'object', properties, required, additionalProperties: false },
    ...(body ? { body } : {}),
  };
}

function asArray(value: unknown): Json[] {
  return Array.isArray(value)
    ? (value.filter((entry) => typeof entry === 'object' && entry !== null) as Json[])
    : [];
}
