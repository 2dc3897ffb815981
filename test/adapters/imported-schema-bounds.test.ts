import { DynamicStructuredTool } from '@langchain/core/tools';
import { tool as sdkTool } from '@openai/agents';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { fromLangChainTool, fromOpenAIFunction, fromOpenAPI } from '../../src/adapters/index.js';
import { VeridexError } from '../../src/errors/index.js';
import { runTool } from '../../src/governance/index.js';
import { fromOpenAIAgentsTool } from '../../src/openai-agents/index.js';
import type { AnyGovernedTool } from '../../src/tools/index.js';
import { importMcp } from '../attacks/fixtures/poisoned-imports.js';

type Importer = (parameters: Record<string, unknown>) => Promise<AnyGovernedTool>;

const DESCRIPTION = 'Looks a record up.';

// Every importer that reads a JSON Schema through `importJsonSchema`, given one tool's input.
const IMPORTERS: Record<string, Importer> = {
  MCP: async (inputSchema) => {
    const [tool] = await importMcp([{ name: 'lookup', description: DESCRIPTION, inputSchema }]);
    return tool!;
  },
  fromLangChainTool: async (schema) =>
    fromLangChainTool(
      new DynamicStructuredTool({
        name: 'lookup',
        description: DESCRIPTION,
        schema: schema as never,
        func: async () => 'found',
      }),
      { safetyClass: 'read' },
    ),
  fromOpenAIFunction: async (parameters) =>
    fromOpenAIFunction({ name: 'lookup', description: DESCRIPTION, parameters }, () => 'found', {
      safetyClass: 'read',
    }),
  fromOpenAIAgentsTool: async (parameters) =>
    fromOpenAIAgentsTool(
      sdkTool({
        name: 'lookup',
        description: DESCRIPTION,
        parameters,
        strict: false,
        execute: async () => 'found',
      } as never),
      { safetyClass: 'read' },
    ),
};

/** `d<i>` names `d<i-1>` twice: written out, level `levels` is 2^levels copies of `d0`. */
function refChain(
  levels: number,
  ref: (level: number) => object = (level) => ({ $ref: `#/$defs/d${level}` }),
) {
  const $defs: Record<string, unknown> = { d0: { type: 'string' } };
  for (let level = 1; level <= levels; level++) {
    $defs[`d${level}`] = {
      type: 'object',
      properties: { a: ref(level - 1), b: ref(level - 1) },
    };
  }
  return { type: 'object', $defs, properties: { x: ref(levels) } };
}

async function refusalOf(importer: Importer, schema: Record<string, unknown>) {
  const error = await importer(schema).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(VeridexError.is(error), `imported: ${String(error)}`).toBe(true);
  return error as VeridexError;
}

const EVIL = '^(a+)+$';

describe.each(Object.entries(IMPORTERS))('%s: imported JSON Schemas are bounded', (_, importer) => {
  it('refuses $defs that double at each of 40 levels (import_too_large), in milliseconds', async () => {
    const started = performance.now();
    const error = await refusalOf(importer, refChain(40));
    expect(error.code).toBe('import_too_large');
    expect(error.message).toMatch(/"lookup".*expands to more than 500000 characters/);
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it('counts $refs the sanitiser spells back (a zero-width space in the key is removed before zod reads it)', async () => {
    const error = await refusalOf(
      importer,
      refChain(40, (level) => ({ '$r\u200bef': `#/$defs/d${level}` })),
    );
    expect(error.code).toBe('import_too_large');
  });

  it('imports shared and recursive definitions that stay small once written out', async () => {
    const address = { type: 'object', properties: { city: { type: 'string' } } };
    const tool = await importer({
      type: 'object',
      $defs: { address, node: { type: 'object', properties: { next: { $ref: '#/$defs/node' } } } },
      properties: {
        billing: { $ref: '#/$defs/address' },
        shipping: { $ref: '#/$defs/address' },
        chain: { $ref: '#/$defs/node' },
      },
    });
    expect(JSON.stringify(tool.jsonSchema.input).length).toBeLessThan(2_000);
    expect(tool.jsonSchema.input).toMatchObject({
      properties: { billing: { properties: { city: { type: 'string' } } } },
    });
  });

  it('refuses a schema declaring both $defs and definitions (import_invalid)', async () => {
    const error = await refusalOf(importer, {
      type: 'object',
      $defs: { a: { type: 'string' } },
      definitions: { a: { type: 'object', properties: {} } },
      properties: { x: { $ref: '#/$defs/a' } },
    });
    expect(error.code).toBe('import_invalid');
  });

  it.each([
    [
      'a pattern',
      { properties: { id: { type: 'string', pattern: EVIL } } },
      '/properties/id/pattern',
    ],
    [
      'a patternProperties key',
      { patternProperties: { [EVIL]: { type: 'string' } } },
      `/patternProperties/${EVIL}`,
    ],
    ['propertyNames.pattern', { propertyNames: { pattern: EVIL } }, '/propertyNames/pattern'],
    [
      'a pattern in a definition',
      {
        $defs: { id: { type: 'string', pattern: EVIL } },
        properties: { id: { $ref: '#/$defs/id' } },
      },
      '/$defs/id/pattern',
    ],
    [
      'a pattern in an array item',
      { properties: { ids: { type: 'array', items: { type: 'string', pattern: '\\s+$' } } } },
      '/properties/ids/items/pattern',
    ],
    [
      'a pattern sent as an array (RegExp reads it as its text)',
      { properties: { id: { type: 'string', pattern: [EVIL] } } },
      '/properties/id/pattern',
    ],
    [
      'a pattern the sanitiser makes exponential (a zero-width space removed)',
      { properties: { id: { type: 'string', pattern: '^(a+\u200b)+$' } } },
      '/properties/id/pattern',
    ],
  ])(
    'refuses %s that backtracks super-linearly, naming the tool and where',
    async (_, schema, path) => {
      const error = await refusalOf(importer, { type: 'object', ...schema });
      expect(error.code).toBe('import_invalid');
      expect(error.message).toMatch(
        /^(MCP|LangChain|OpenAI|OpenAI Agents) (tool|function) "lookup"/,
      );
      expect(error.details).toMatchObject({ path });
      expect(error.message).toMatch(/provably linear-time/);
    },
  );

  it('imports ordinary patterns and reads a property named "pattern" or pattern-shaped data as what they are', async () => {
    const tool = await importer({
      type: 'object',
      properties: {
        iban: { type: 'string', pattern: '^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$' },
        email: { type: 'string', pattern: '^[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\\.[a-zA-Z]{2,}$' },
        day: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$' },
        pattern: { type: 'string', description: 'A search pattern.' },
        filter: { type: 'object', default: { pattern: EVIL }, properties: {} },
      },
      required: ['iban'],
    });
    expect(tool.jsonSchema.input).toMatchObject({
      properties: { iban: { pattern: '^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$' } },
    });
    const refused = await runTool(tool, { iban: 'nope' }, { threadId: 't', toolCallId: 'c1' });
    expect(refused).toMatchObject({ status: 'error', code: 'input_invalid' });
  });
});

describe('fromLangChainTool with a zod schema', () => {
  it('imports a tool built with zod string formats (their patterns are linear)', async () => {
    const lookup = new DynamicStructuredTool({
      name: 'lookup',
      description: DESCRIPTION,
      schema: z.object({
        email: z.email(),
        id: z.uuid(),
        at: z.iso.datetime(),
        host: z.hostname(),
        ip: z.ipv4(),
        code: z.string().regex(/^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$/),
      }),
      func: async () => 'found',
    });
    expect(fromLangChainTool(lookup, { safetyClass: 'read' }).trust).toBe('imported');
  });

  it('refuses a zod schema that shares a sub-schema twice per level, without writing it out first', () => {
    let level: z.ZodType = z.string();
    for (let depth = 0; depth < 40; depth++) level = z.object({ a: level, b: level });
    const lookup = new DynamicStructuredTool({
      name: 'lookup',
      description: DESCRIPTION,
      schema: z.object({ x: level }),
      func: async () => 'found',
    });
    const started = performance.now();
    expect(() => fromLangChainTool(lookup, { safetyClass: 'read' })).toThrow(
      expect.objectContaining({ code: 'import_too_large' }),
    );
    expect(performance.now() - started).toBeLessThan(1_000);
  });
});

describe('fromOpenAPI', () => {
  it('refuses a request body property whose pattern backtracks, naming the operation', async () => {
    const error = await fromOpenAPI(
      {
        openapi: '3.1.0',
        info: { title: 'hostile', version: '1' },
        servers: [{ url: 'https://api.example.com' }],
        paths: {
          '/records': {
            post: {
              operationId: 'createRecord',
              requestBody: {
                content: {
                  'application/json': {
                    schema: {
                      type: 'object',
                      properties: { name: { type: 'string', pattern: '^([a-z]+\\s?)+$' } },
                    },
                  },
                },
              },
              responses: { '200': { description: 'ok' } },
            },
          },
        },
      },
      { lockFile: false },
    ).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toMatchObject({ code: 'import_invalid' });
    expect((error as Error).message).toMatch(/OpenAPI operation "createRecord".*pattern/);
  });
});
