import type { DynamicStructuredTool, StructuredToolInterface } from '@langchain/core/tools';
import { hostLangChainTool } from '../adapters/hosted-langchain-tool.js';
import { VeridexError } from '../errors/index.js';
import {
  classifyTools,
  isLangChainTool,
  type LangChainToolLike,
  type NodeTool,
  plainToolClass,
  type ToolClassification,
} from '../nodes/node-tools.js';
import { bindingTool } from '../tools/binding-tool.js';
import type { AnyGovernedTool, ToolRegistry } from '../tools/index.js';

/** The governed contract of one call's tool, and the plain tool behind it (if hosted). */
export interface ResolvedTool {
  tool: AnyGovernedTool;
  /** The LangChain tool the host runs (through its handler), for hosted tools. */
  original?: LangChainToolLike;
}

/**
 * The tools the middleware governs. Those given to the middleware are known from the start:
 * the approval gate decides their calls before any tool runs, and the agent binds them (our
 * closed schemas). Tools given to `createAgent` itself are governed too, each classified at its
 * first call (`safetyClasses`, else the default `write`); calls needing approval then wait at
 * the tool itself.
 */
export class MiddlewareTools {
  readonly registry: ToolRegistry;
  /** Governed name → the plain tool's own name (names its ToolMessages). */
  readonly hosted: Map<string, string>;
  /** What the middleware adds to the agent: schemas the model binds; execution is ours. */
  readonly bindings: DynamicStructuredTool[];
  readonly #known: Map<string, ResolvedTool>;
  readonly #lazy = new WeakMap<object, AnyGovernedTool>();
  readonly #classification: ToolClassification;

  constructor(tools: readonly NodeTool[], classification: ToolClassification) {
    const { registry, hosted } = classifyTools(tools, classification, false);
    this.registry = registry;
    this.hosted = hosted;
    this.#classification = classification;
    const originals = new Map(
      tools.filter(isLangChainTool).map((item) => [item.name, item] as const),
    );
    this.#known = new Map(
      registry.list().map((tool) => {
        const original = hosted.has(tool.name) ? originals.get(hosted.get(tool.name)!) : undefined;
        return [tool.name, { tool, ...(original ? { original } : {}) }] as const;
      }),
    );
    this.bindings = registry.list().map((tool) => bindingTool(tool, 'governanceMiddleware'));
  }

  /** True for a tool given to the middleware (the approval gate decides its calls). */
  isKnown(name: string): boolean {
    return this.#known.has(name);
  }

  /** The known tool of that name. */
  known(name: string): ResolvedTool | undefined {
    return this.#known.get(name);
  }

  /**
   * The governed contract for a call to `name`, whose tool the host holds as `hostTool`: a
   * known tool, else the host's plain tool, governed now with its declared class.
   * @throws VeridexError `config_invalid` when the host's tool clashes with another tool's name.
   */
  resolve(name: string, hostTool: unknown): ResolvedTool | undefined {
    const known = this.#known.get(name);
    if (known) return known;
    if (!isLangChainTool(hostTool)) return undefined;
    let tool = this.#lazy.get(hostTool);
    if (!tool) {
      tool = hostLangChainTool(hostTool as StructuredToolInterface, {
        safetyClass: plainToolClass(hostTool.name, this.#classification),
      });
      const taken = this.hosted.get(tool.name);
      if (this.#known.has(tool.name) || (taken !== undefined && taken !== hostTool.name)) {
        throw new VeridexError(
          'config_invalid',
          `governanceMiddleware: the agent's tool "${hostTool.name}" has the name of another governed tool ("${tool.name}"); a call could not tell them apart.`,
        );
      }
      this.registry.register(tool);
      this.hosted.set(tool.name, hostTool.name);
      this.#lazy.set(hostTool, tool);
    }
    return { tool, original: hostTool };
  }
}
