import type { StructuredToolInterface } from '@langchain/core/tools';
import { hostLangChainTool } from '../adapters/hosted-langchain-tool.js';
import { VeridexError } from '../errors/index.js';
import {
  type AnyGovernedTool,
  isGovernedTool,
  SAFETY_CLASSES,
  type SafetyClass,
  ToolRegistry,
} from '../tools/index.js';

/**
 * A tool a `ToolNode` user may hand the governed node: a governed tool (`tool()`), or a plain
 * LangChain tool (`tool()` from `@langchain/core/tools`, a `StructuredTool`, a
 * `DynamicStructuredTool`, a runnable turned tool with `asTool()`), governed with the safety
 * class the node's options give it.
 */
export type NodeTool = AnyGovernedTool | StructuredToolInterface | LangChainToolLike;

/** The least a LangChain tool has: a name, a description, an input schema and `invoke`. */
export interface LangChainToolLike {
  name: string;
  description?: string;
  schema?: unknown;
  invoke(input: unknown, config?: unknown): Promise<unknown>;
}

/** How plain LangChain tools are classified. */
export interface ToolClassification {
  /** Safety class per plain tool, by its LangChain name. Governed tools declare their own. */
  safetyClasses?: Readonly<Record<string, SafetyClass>>;
  /**
   * Safety class of plain tools not in `safetyClasses`. Default `write` (allowed and logged).
   * Never `read`: a tool is read-only only when you say so for that tool, by name.
   */
  defaultSafetyClass?: Exclude<SafetyClass, 'read'>;
}

/**
 * The safety class of a plain tool named `name` under `options`.
 * @throws VeridexError `config_invalid` for an unknown class, or `defaultSafetyClass: 'read'`.
 */
export function plainToolClass(name: string, options: ToolClassification): SafetyClass {
  const classes = options.safetyClasses ?? {};
  const fallback = options.defaultSafetyClass ?? 'write';
  if ((fallback as SafetyClass) === 'read') {
    throw invalid(
      'defaultSafetyClass cannot be "read": a tool is read-only only when declared so by name in safetyClasses.',
    );
  }
  checkClass(fallback, 'defaultSafetyClass');
  const safetyClass = Object.hasOwn(classes, name) ? classes[name]! : fallback;
  checkClass(safetyClass, `safetyClasses["${name}"]`);
  return safetyClass;
}

/** The node's tools, governed, and the LangChain names of the plain ones. */
export interface ClassifiedTools {
  registry: ToolRegistry;
  /** Governed name → the plain tool's own name (what its ToolMessages are named). */
  hosted: Map<string, string>;
}

/**
 * Governs a ToolNode-style tool list: governed tools as they are, plain LangChain tools through
 * `hostLangChainTool` with their declared (or the default) safety class.
 *
 * @throws VeridexError `config_invalid` where the classification is ambiguous: an unknown safety
 * class, `defaultSafetyClass: 'read'`, a `safetyClasses` entry naming no plain tool (a typo would
 * leave the tool at the default) or a governed tool (it declares its own), two tools under one
 * name, or something that is not a tool.
 */
export function classifyTools(
  tools: readonly NodeTool[] | ToolRegistry,
  options: ToolClassification = {},
  /** Whether every `safetyClasses` entry must name one of `tools` (false: more may come later). */
  complete = true,
): ClassifiedTools {
  const classes = options.safetyClasses ?? {};
  if (tools instanceof ToolRegistry) {
    if (Object.keys(classes).length > 0) {
      throw invalid(
        'safetyClasses applies to plain LangChain tools; a registry holds governed tools only.',
      );
    }
    return { registry: tools, hosted: new Map() };
  }
  if (!Array.isArray(tools)) throw invalid('tools must be a list of tools or a ToolRegistry.');
  plainToolClass('', { ...options, safetyClasses: {} });
  const plainNames = new Set<string>();
  const governed: AnyGovernedTool[] = [];
  const hosted = new Map<string, string>();
  for (const [index, item] of tools.entries()) {
    if (isGovernedTool(item)) {
      if (Object.hasOwn(classes, item.name)) {
        throw invalid(
          `safetyClasses names "${item.name}", a governed tool: it declares its own safety class (${item.safetyClass}).`,
        );
      }
      governed.push(item);
      continue;
    }
    if (!isLangChainTool(item)) {
      throw invalid(
        `tools[${index}] is neither a governed tool nor a LangChain tool (name, schema and invoke).`,
      );
    }
    const safetyClass = plainToolClass(item.name, options);
    plainNames.add(item.name);
    const wrapped = hostLangChainTool(item as StructuredToolInterface, { safetyClass });
    governed.push(wrapped);
    hosted.set(wrapped.name, item.name);
  }
  for (const name of complete ? Object.keys(classes) : []) {
    if (!plainNames.has(name)) {
      throw invalid(`safetyClasses names "${name}", but no plain tool of the node has that name.`);
    }
  }
  const seen = new Set<string>();
  for (const tool of governed) {
    if (seen.has(tool.name)) {
      throw invalid(
        `two tools are named "${tool.name}" (after normalising names to what model APIs accept); a call could not tell them apart.`,
      );
    }
    seen.add(tool.name);
  }
  return { registry: new ToolRegistry().register(...governed), hosted };
}

/** True for an object with what a LangChain tool has: a name, a schema and `invoke`. */
export function isLangChainTool(value: unknown): value is LangChainToolLike {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { name?: unknown }).name === 'string' &&
    typeof (value as { invoke?: unknown }).invoke === 'function' &&
    'schema' in value
  );
}

function checkClass(value: unknown, field: string): void {
  if (!SAFETY_CLASSES.includes(value as SafetyClass)) {
    throw invalid(`${field} must be one of ${SAFETY_CLASSES.join(', ')}; got ${String(value)}.`);
  }
}

function invalid(message: string): VeridexError {
  return new VeridexError('config_invalid', `governedToolNode: ${message}`);
}
