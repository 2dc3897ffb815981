import type { StructuredToolInterface } from '@langchain/core/tools';
import { hostLangChainTool } from '../adapters/hosted-langchain-tool.js';
import { VeridexError } from '../errors/index.js';
import {
  checkClassification,
  checkClassifiedNames,
  confusedWith,
  isLangChainTool,
  type LangChainToolLike,
  plainToolClass,
  type ToolClassification,
  unknownNames,
} from '../governance/safety-class-config.js';
import { type AnyGovernedTool, isGovernedTool, ToolRegistry } from '../tools/index.js';

/**
 * A tool a `ToolNode` user may hand the governed node: a governed tool (`tool()`), or a plain
 * LangChain tool (`tool()` from `@langchain/core/tools`, a `StructuredTool`, a
 * `DynamicStructuredTool`, a runnable turned tool with `asTool()`), governed with the safety
 * class the node's options give it.
 */
export type NodeTool = AnyGovernedTool | StructuredToolInterface | LangChainToolLike;

export type { LangChainToolLike, ToolClassification } from '../governance/safety-class-config.js';
export { isLangChainTool } from '../governance/safety-class-config.js';

/** The node's tools, governed, and the LangChain names of the plain ones. */
export interface ClassifiedTools {
  registry: ToolRegistry;
  /** Governed name → the plain tool's own name (what its ToolMessages are named). */
  hosted: Map<string, string>;
  /** `safetyClasses` keys naming none of the tools (only when the list is not `complete`). */
  pending: string[];
}

/**
 * Governs a ToolNode-style tool list: governed tools as they are, plain LangChain tools through
 * `hostLangChainTool` with the class `safetyClasses` gives them by name, else the explicit
 * `defaultSafetyClass` (README "Fail closed: no silent safety class").
 *
 * @throws VeridexError `config_invalid` where the classification is missing or ambiguous: a
 * plain tool with no class and no `defaultSafetyClass`, an unknown safety class,
 * `defaultSafetyClass: 'read'`, a `safetyClasses` entry naming no plain tool (a typo would
 * leave the tool it meant unclassified) or a governed tool (it declares its own), two tools
 * under one name, or something that is not a tool.
 */
export function classifyTools(
  tools: readonly NodeTool[] | ToolRegistry,
  options: ToolClassification = {},
  /** Whether every `safetyClasses` entry must name one of `tools` (false: more may come later). */
  complete = true,
  where = 'governedToolNode',
): ClassifiedTools {
  checkClassification(options, where);
  const classes = options.safetyClasses ?? {};
  if (tools instanceof ToolRegistry) {
    if (Object.keys(classes).length > 0) {
      throw invalid(
        where,
        'safetyClasses applies to plain LangChain tools; a registry holds governed tools only.',
      );
    }
    return { registry: tools, hosted: new Map(), pending: [] };
  }
  if (!Array.isArray(tools))
    throw invalid(where, 'tools must be a list of tools or a ToolRegistry.');
  const plain: LangChainToolLike[] = [];
  const governed: AnyGovernedTool[] = [];
  for (const [index, item] of tools.entries()) {
    if (isGovernedTool(item)) governed.push(item);
    else if (isLangChainTool(item)) plain.push(item);
    else {
      throw invalid(
        where,
        `tools[${index}] is neither a governed tool nor a LangChain tool (name, schema and invoke).`,
      );
    }
  }
  const plainNames = plain.map((item) => item.name);
  const governedNames = governed.map((tool) => tool.name);
  const pending = Object.keys(classes).filter(
    (key) => !plainNames.includes(key) && !governedNames.includes(key),
  );
  if (complete) checkClassifiedNames(options, plainNames, governed, where);
  else {
    // The middleware: createAgent's own tools come later, so a key naming none of these may be
    // one of them (checked once the agent's tools are seen). A key naming a governed tool, or
    // only looking like one of these tools (`refund ` for `refund`), is wrong already.
    checkClassifiedNames(options, [...plainNames, ...pending], governed, where);
    const known = [...plainNames, ...governedNames];
    const alike = pending.filter((key) => confusedWith(key, known) !== undefined);
    if (alike.length > 0) throw unknownNames(alike, plainNames, where);
  }
  const hosted = new Map<string, string>();
  for (const item of plain) {
    const safetyClass = plainToolClass(item.name, options, where);
    const wrapped = hostLangChainTool(item as StructuredToolInterface, { safetyClass });
    governed.push(wrapped);
    hosted.set(wrapped.name, item.name);
  }
  const seen = new Set<string>();
  for (const tool of governed) {
    if (seen.has(tool.name)) {
      throw invalid(
        where,
        `two tools are named "${tool.name}" (after normalising names to what model APIs accept); a call could not tell them apart.`,
      );
    }
    seen.add(tool.name);
  }
  return {
    registry: new ToolRegistry().register(...governed),
    hosted,
    pending: complete ? [] : pending,
  };
}

function invalid(where: string, message: string): VeridexError {
  return new VeridexError('config_invalid', `${where}: ${message}`);
}
