import { tool as langchainTool } from '@langchain/core/tools';
import { MemorySaver } from '@langchain/langgraph';
import fc from 'fast-check';
import { createAgent } from 'langchain';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { fromOpenAPI, serveMcp, toLangChainTool } from '../../src/adapters/index.js';
import { AuditLog } from '../../src/audit/index.js';
import { VeridexError } from '../../src/errors/index.js';
import { scopeMetadata } from '../../src/governance/governance-runtime.js';
import { runTool } from '../../src/governance/index.js';
import { governanceMiddleware } from '../../src/middleware/index.js';
import { createGovernedAgent, GovernedToolNode } from '../../src/nodes/index.js';
import { toOpenAIAgentsTool } from '../../src/openai-agents/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { tool } from '../../src/tools/index.js';

/**
 * README "Fail closed: no silent safety class". Each test is a mistake an operator makes in
 * configuration — a typo, a look-alike key, a tool nobody classified — on one path to a tool;
 * each must be refused with `config_invalid`, and the tool it concerned must not run.
 */

/** A plain LangChain `refund` tool that counts its executions. */
function plainRefund(name = 'refund') {
  const counter = { refunds: 0 };
  const refund = langchainTool(
    async () => {
      counter.refunds += 1;
      return 'refunded';
    },
    { name, description: 'Refund an order.', schema: z.object({ order: z.string() }) },
  );
  return { refund, counter };
}

const governedLookup = tool({
  name: 'lookup',
  description: 'Look an order up.',
  safetyClass: 'read',
  input: z.object({ order: z.string() }),
  output: z.string(),
  async execute() {
    return 'found';
  },
});

/** The config error `action` fails with (LangChain wraps a middleware's error: its cause). */
async function configError(action: () => unknown): Promise<VeridexError> {
  try {
    await action();
  } catch (error) {
    let found: unknown = error;
    while (found !== undefined && !(found instanceof VeridexError)) {
      found = (found as { cause?: unknown }).cause;
    }
    expect(found, String(error)).toBeInstanceOf(VeridexError);
    expect((found as VeridexError).code).toBe('config_invalid');
    return found as VeridexError;
  }
  throw new Error('expected a config_invalid error');
}

/** A createAgent agent whose model calls `refund` once, governed by the middleware. */
function refundAgent(
  refund: unknown,
  middleware: Parameters<typeof governanceMiddleware>[0],
  middlewareTools = false,
) {
  const governance = governanceMiddleware({
    ...middleware,
    ...(middlewareTools ? { tools: [refund as never] } : {}),
  });
  return createAgent({
    model: scriptedModel([
      { toolCalls: [{ name: 'refund', args: { order: 'A-1' } }] },
      'Refunded.',
    ]) as never,
    tools: (middlewareTools ? [] : [refund]) as never,
    middleware: [governance] as never,
    checkpointer: new MemorySaver(),
  }) as unknown as { invoke(input: unknown, config: unknown): Promise<unknown> };
}

const invoke = (agent: ReturnType<typeof refundAgent>, thread: string) =>
  agent.invoke(
    { messages: [{ role: 'user', content: 'refund A-1' }] },
    { configurable: { thread_id: thread } },
  );

describe('the createAgent middleware fails closed on tool classification', () => {
  it('refuses a typo in safetyClasses (refnud) instead of running the refund unapproved', async () => {
    const { refund, counter } = plainRefund();
    const agent = refundAgent(refund, { safetyClasses: { refnud: 'financial' } });
    const error = await configError(() => invoke(agent, 'typo-1'));
    expect(error.message).toContain('"refnud"');
    expect(error.message).toContain('"refund"');
    expect(error.message).toMatch(/looks like "refund"/);
    expect(counter.refunds).toBe(0);
  });

  it('refuses the typo even with an explicit defaultSafetyClass the refund would pass under', async () => {
    const { refund, counter } = plainRefund();
    const agent = refundAgent(refund, {
      safetyClasses: { refnud: 'financial' },
      defaultSafetyClass: 'write',
    });
    await configError(() => invoke(agent, 'typo-2'));
    expect(counter.refunds).toBe(0);
  });

  it.each([
    ['a trailing space', 'refund '],
    ['a Cyrillic е', 'r\u0435fund'],
  ])('refuses a key with %s, for an agent tool and for a middleware tool', async (_, key) => {
    const agentSide = plainRefund();
    const agent = refundAgent(agentSide.refund, {
      safetyClasses: { [key]: 'financial' },
      defaultSafetyClass: 'write',
    });
    await configError(() => invoke(agent, `alike-${key.length}-${key.charCodeAt(1)}`));
    expect(agentSide.counter.refunds).toBe(0);
    const middlewareSide = plainRefund();
    const error = await configError(() =>
      governanceMiddleware({
        tools: [middlewareSide.refund],
        safetyClasses: { [key]: 'financial' },
        defaultSafetyClass: 'write',
      }),
    );
    expect(error.message).toMatch(/looks like "refund"/);
  });

  it('refuses a plain agent tool with no class, naming the tool and how to classify it', async () => {
    const { refund, counter } = plainRefund();
    const agent = refundAgent(refund, {});
    const error = await configError(() => invoke(agent, 'unclassified-1'));
    expect(error.message).toContain('"refund"');
    expect(error.message).toContain('defaultSafetyClass');
    expect(counter.refunds).toBe(0);
  });

  it('refuses a plain middleware tool with no class when the middleware is built', async () => {
    const { refund } = plainRefund();
    const error = await configError(() => governanceMiddleware({ tools: [refund] }));
    expect(error.message).toContain('"refund"');
    expect(error.message).toContain('defaultSafetyClass');
  });

  it('runs a plain tool under an explicit defaultSafetyClass: write', async () => {
    const { refund, counter } = plainRefund();
    await invoke(refundAgent(refund, { defaultSafetyClass: 'write' }), 'explicit-1');
    expect(counter.refunds).toBe(1);
    const inside = plainRefund();
    await invoke(refundAgent(inside.refund, { defaultSafetyClass: 'write' }, true), 'explicit-2');
    expect(inside.counter.refunds).toBe(1);
  });

  it('refuses a safety class value that is not one (a typo in the value)', async () => {
    const { refund } = plainRefund();
    const error = await configError(() =>
      governanceMiddleware({
        tools: [refund],
        safetyClasses: { refund: 'finacial' as never },
      }),
    );
    expect(error.message).toContain('finacial');
  });
});

describe('the governed tool node fails closed on tool classification', () => {
  it('refuses a plain tool with no class, and takes an explicit default', async () => {
    const { refund } = plainRefund();
    const error = await configError(() => new GovernedToolNode({ tools: [refund] }));
    expect(error.message).toContain('"refund"');
    const node = new GovernedToolNode({ tools: [refund], defaultSafetyClass: 'write' });
    expect(node.registry.list()).toEqual([
      expect.objectContaining({ name: 'refund', safetyClass: 'write' }),
    ]);
  });

  it.each(['refnud', 'refund ', 'r\u0435fund'])(
    'refuses the key %j naming no tool, with a look-alike hint',
    async (key) => {
      const { refund } = plainRefund();
      const error = await configError(
        () =>
          new GovernedToolNode({
            tools: [refund],
            safetyClasses: { [key]: 'financial' },
            defaultSafetyClass: 'write',
          }),
      );
      expect(error.message).toMatch(/looks like "refund"/);
    },
  );
});

describe('createGovernedAgent fails closed on tool classification, before any I/O', () => {
  const base = { name: 'bot', instructions: 'Help.', model: scriptedModel([]) as never };

  it('refuses a plain tool with no class', async () => {
    const { refund } = plainRefund();
    const error = await configError(() => createGovernedAgent({ ...base, tools: [refund] }));
    expect(error.message).toContain('createGovernedAgent');
  });

  it('refuses a typo in safetyClasses', async () => {
    const { refund } = plainRefund();
    const error = await configError(() =>
      createGovernedAgent({
        ...base,
        tools: [refund],
        safetyClasses: { refnud: 'financial' },
        defaultSafetyClass: 'write',
      }),
    );
    expect(error.message).toMatch(/looks like "refund"/);
  });
});

describe('paths that take governed tools only refuse what would go unclassified', () => {
  const shared = { safetyClasses: { refnud: 'financial' } } as Record<string, unknown>;

  it('runTool refuses a plain tool and a safetyClasses map', async () => {
    const { refund, counter } = plainRefund();
    await configError(() => runTool(refund as never, { order: 'A-1' }));
    await configError(() => runTool(governedLookup, { order: 'A-1' }, shared));
    expect(counter.refunds).toBe(0);
  });

  it('toLangChainTool, toOpenAIAgentsTool and serveMcp refuse them too', async () => {
    const { refund } = plainRefund();
    await configError(() => toLangChainTool(refund as never));
    await configError(() => toLangChainTool(governedLookup, shared));
    await configError(() => toOpenAIAgentsTool(refund as never));
    await configError(() => toOpenAIAgentsTool(governedLookup, shared));
    await configError(() => serveMcp([refund as never]));
    await configError(() => serveMcp([governedLookup], shared));
  });

  it('a safetyClasses key naming the governed tool is refused: it declares its own', async () => {
    const error = await configError(() =>
      runTool(governedLookup, { order: 'A-1' }, { safetyClasses: { lookup: 'financial' } } as {}),
    );
    expect(error.message).toContain('declares its own');
  });
});

describe('fromOpenAPI fails closed on its per-operation map', () => {
  const spec = 'test/adapters/fixtures/openapi/payments.json';

  it('refuses an overrides key naming no operation (a typo would leave it at its method class)', async () => {
    const error = await configError(() =>
      fromOpenAPI(spec, {
        lockFile: false,
        overrides: { createPayuot: { safetyClass: 'financial' } },
      }),
    );
    expect(error.message).toMatch(/looks like "createPayout"/);
  });

  it('refuses an unknown method or class in safetyClassByMethod and overrides', async () => {
    await configError(() =>
      fromOpenAPI(spec, { lockFile: false, safetyClassByMethod: { POST: 'financial' } as never }),
    );
    await configError(() =>
      fromOpenAPI(spec, { lockFile: false, safetyClassByMethod: { post: 'finance' as never } }),
    );
    await configError(() =>
      fromOpenAPI(spec, {
        lockFile: false,
        overrides: { createPayout: { safetyClass: 'finance' as never } },
      }),
    );
  });
});

describe('scopeMetadata passes plain JSON scalars only', () => {
  class Client {
    secret = 'sk-live';
  }

  it('drops functions, symbols, class instances, arrays, non-finite numbers and getters', () => {
    let reads = 0;
    const configurable: Record<string, unknown> = {
      thread_id: 't-1',
      tenant: 'acme',
      limit: 3,
      flag: false,
      none: null,
      callback: () => 'host',
      symbol: Symbol('s'),
      client: new Client(),
      list: ['a'],
      big: 1n,
      nan: Number.NaN,
      missing: undefined,
      __pregel_x: 'internal',
      checkpoint_id: 'c',
    };
    Object.defineProperty(configurable, 'computed', {
      enumerable: true,
      get: () => {
        reads += 1;
        return 'from a getter';
      },
    });
    expect(scopeMetadata(configurable)).toEqual({
      thread_id: 't-1',
      tenant: 'acme',
      limit: 3,
      flag: false,
      none: null,
    });
    expect(reads).toBe(0);
    const proto = JSON.parse('{"__proto__": null, "tenant": "acme"}') as Record<string, unknown>;
    const metadata = scopeMetadata(proto);
    expect(Object.getPrototypeOf(metadata)).toBe(Object.prototype);
    expect(Object.keys(metadata)).toEqual(['tenant']);
  });

  it('only ever returns what survives a JSON round trip unchanged', () => {
    fc.assert(
      fc.property(
        fc.dictionary(
          fc.string(),
          fc.oneof(fc.anything(), fc.func(fc.anything()), fc.constant(Symbol('x'))),
        ),
        (configurable) => {
          const metadata = scopeMetadata(configurable as Record<string, unknown>);
          expect(Object.getPrototypeOf(metadata)).toBe(Object.prototype);
          const text = JSON.stringify(metadata);
          expect(JSON.stringify(JSON.parse(text))).toBe(text);
          expect(Object.keys(JSON.parse(text))).toEqual(Object.keys(metadata));
          for (const value of Object.values(metadata)) {
            expect(value === null || ['string', 'number', 'boolean'].includes(typeof value)).toBe(
              true,
            );
          }
        },
      ),
    );
  });

  it('is what a converted tool hands its tool as context.metadata', async () => {
    let seen: Readonly<Record<string, unknown>> | undefined;
    const probe = tool({
      name: 'probe',
      description: 'Sees metadata.',
      safetyClass: 'read',
      input: z.object({}),
      output: z.string(),
      async execute({ context }) {
        seen = context.metadata;
        return 'ok';
      },
    });
    await toLangChainTool(probe, { audit: new AuditLog() }).invoke(
      {},
      { configurable: { thread_id: 't', tenant: 'acme', callback: () => 'host' } },
    );
    expect(seen).toEqual({ thread_id: 't', tenant: 'acme' });
  });
});
