import type { DynamicStructuredTool, StructuredToolInterface } from '@langchain/core/tools';
import { hostLangChainTool } from '../adapters/hosted-langchain-tool.js';
import { VeridexError } from '../errors/index.js';
import { checkReviewNames } from '../governance/review-config.js';
import {
  confusedWith,
  isLangChainTool,
  type LangChainToolLike,
  plainToolClass,
  type ToolClassification,
  unknownNames,
} from '../governance/safety-class-config.js';
import { classifyTools, type NodeTool } from '../nodes/node-tools.js';
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
 * first call (`safetyClasses`, else an explicit `defaultSafetyClass`, else refused); calls
 * needing approval then wait at the tool itself. `safetyClasses` keys naming none of the
 * middleware's tools must name one of the agent's: checked against the tools of the first
 * model request, before the model runs (README "Fail closed: no silent safety class").
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
  /** `safetyClasses` keys naming none of the middleware's tools, until seen among the agent's. */
  #pending: readonly string[];
  /** `review` keys naming none of the middleware's tools, until seen among the agent's. */
  #pendingReview: readonly string[];
  /** createAgent's own tools, by the name the model calls them, once seen (see {@link learn}). */
  readonly #learned = new Map<string, ResolvedTool>();
  #learnedOnce = false;

  constructor(
    tools: readonly NodeTool[],
    classification: ToolClassification,
    reviewKeys: readonly string[] = [],
  ) {
    const { registry, hosted, pending } = classifyTools(
      tools,
      classification,
      false,
      'governanceMiddleware',
    );
    this.registry = registry;
    this.hosted = hosted;
    this.#pending = pending;
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
    this.#pendingReview = reviewKeys.filter((key) => !this.#known.has(key));
  }

  /** True while some `safetyClasses` or `review` key has not been found among the agent's tools. */
  get unchecked(): boolean {
    return this.#pending.length > 0 || this.#pendingReview.length > 0;
  }

  /**
   * Governs createAgent's own tools as soon as they are seen (a model request's `tools`, or
   * the agent's options when a thread is resumed through `resumeThread`/`startResumer`), so
   * the approval gate decides their calls with the middleware's, one interrupt per model
   * turn. Checks the pending `safetyClasses` and `review` keys first.
   * @throws VeridexError `config_invalid` for an unknown key or an unclassified tool.
   */
  learn(agentTools: readonly unknown[]): void {
    this.checkAgentTools(agentTools);
    this.#learnedOnce = true;
    for (const item of agentTools) {
      if (!isLangChainTool(item) || this.#known.has(item.name) || this.#learned.has(item.name)) {
        continue;
      }
      const resolved = this.resolve(item.name, item);
      if (resolved) this.#learned.set(item.name, resolved);
    }
  }

  /** Names of every tool governed so far: the middleware's and createAgent's learned ones. */
  get names(): string[] {
    return [...this.#known.keys(), ...this.#learned.keys()];
  }

  /** True once createAgent's tools were seen (a model request, or `useAgentTools`). */
  get learnedAgentTools(): boolean {
    return this.#learnedOnce;
  }

  /** The tool the approval gate decides a call to `name` with: the middleware's, or a learned one. */
  gated(name: string): ResolvedTool | undefined {
    return this.#known.get(name) ?? this.#learned.get(name);
  }

  /**
   * Checks the pending `safetyClasses` keys against the names of every tool the agent binds
   * (a model request's `tools`): each must name a plain tool there.
   * @throws VeridexError `config_invalid` listing the unknown keys, the known tools and look-alikes.
   */
  checkAgentTools(agentTools: readonly unknown[]): void {
    if (!this.unchecked) return;
    const names = agentTools
      .map((item) => (item as { name?: unknown } | null)?.name)
      .filter((name): name is string => typeof name === 'string');
    const plainNames = names.filter((name) => !this.#known.has(name) || this.hosted.has(name));
    const unknown = this.#pending.filter((key) => !plainNames.includes(key));
    if (unknown.length > 0) throw unknownNames(unknown, plainNames, 'governanceMiddleware');
    checkReviewNames(
      this.#pendingReview.filter((key) => !names.includes(key)),
      names,
      'governanceMiddleware',
    );
    this.#pending = [];
    this.#pendingReview = [];
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
      // Before the agent's tools were seen (a thread resumed in a new process starts at its
      // tools), a key that reads as this tool's name but differs is refused, not skipped.
      const confused = confusedWith(hostTool.name, this.#pending);
      if (confused !== undefined) {
        throw unknownNames([confused], [hostTool.name], 'governanceMiddleware');
      }
      const confusedReview = confusedWith(hostTool.name, this.#pendingReview);
      if (confusedReview !== undefined) {
        checkReviewNames([confusedReview], [hostTool.name], 'governanceMiddleware');
      }
      tool = hostLangChainTool(hostTool as StructuredToolInterface, {
        safetyClass: plainToolClass(hostTool.name, this.#classification, 'governanceMiddleware'),
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
