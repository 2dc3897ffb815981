import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { fromOpenAPI } from '../../src/adapters/index.js';
import { VeridexError } from '../../src/errors/index.js';
import { type SafetyClass, ToolRegistry, tool, toolNameKey } from '../../src/tools/index.js';

const named = (name: string, safetyClass: SafetyClass) =>
  tool({
    name,
    description: `Tool ${name}.`,
    safetyClass,
    input: z.object({ id: z.string() }),
    output: z.string(),
    async execute() {
      return 'ok';
    },
  });

describe('tool names that are one name to a model', () => {
  it('the registry refuses a second tool whose name differs only in case, "-" or "_"', () => {
    for (const other of ['Get_Doc2', 'get-doc2', 'get__doc2', '_get_doc2']) {
      const registry = new ToolRegistry().register(named('get_doc2', 'read'));
      let error: unknown;
      try {
        registry.register(named(other, 'privileged'));
      } catch (caught) {
        error = caught;
      }
      expect(VeridexError.is(error, 'tool_name_clash'), other).toBe(true);
      expect(registry.get(other)).toBeUndefined();
    }
    // Distinct names and the same tool again are fine.
    const registry = new ToolRegistry().register(
      named('get_doc2', 'read'),
      named('get_doc', 'read'),
    );
    expect(() => registry.register(named('get_doc2', 'read'))).not.toThrow();
  });

  it('OpenAPI operationIds that normalise to one name fail the import', async () => {
    const operation = (operationId: string) => ({
      operationId,
      responses: { '200': { description: 'ok' } },
    });
    const document = {
      openapi: '3.1.0',
      info: { title: 'clash', version: '1' },
      servers: [{ url: 'https://api.example.com' }],
      paths: { '/a': { get: operation('get_doc') }, '/b': { delete: operation('Get-Doc') } },
    };
    const error = await fromOpenAPI(document, { lockFile: false }).catch((e: unknown) => e);
    expect(VeridexError.is(error, 'tool_name_clash')).toBe(true);
    expect((error as Error).message).toContain('"get_doc"');
    expect((error as Error).message).toContain('"Get-Doc"');
  });

  it('the key ignores case and separator runs, and keeps every other character (property)', () => {
    const name = fc.stringMatching(/^[A-Za-z0-9_-]{1,64}$/);
    fc.assert(
      fc.property(name, (text) => {
        const key = toolNameKey(text);
        expect(toolNameKey(text.toUpperCase().replaceAll('_', '-'))).toBe(key);
        expect(key.replaceAll('_', '')).toBe(text.toLowerCase().replace(/[-_]/g, ''));
        expect(key).not.toMatch(/^_|_$|__/);
      }),
    );
  });
});
