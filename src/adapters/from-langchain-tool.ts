import { isToolMessage } from '@langchain/core/messages';
import type { StructuredToolInterface } from '@langchain/core/tools';
import { toJsonSchema } from '@langchain/core/utils/json_schema';
import { z } from 'zod';
import { createGovernedTool } from '../tools/tool.js';
import type { GovernedTool } from '../tools/types.js';
import {
  classWithAnnotations,
  IMPORTED_DESCRIPTION_LIMIT,
  type ImportedGovernance,
  importedDescription,
  importJsonSchema,
  normalizeToolName,
} from './imported-metadata.js';

/** Options for {@link fromLangChainTool}: the governance the LangChain tool did not have. */
export interface FromLangChainToolOptions extends ImportedGovernance {
  /** Name override (normalised like the original). */
  name?: string;
}

/**
 * Imports a LangChain tool (`StructuredTool`, `DynamicStructuredTool`, `tool()` from
 * `@langchain/core/tools`) as a governed tool labelled `trust: 'imported'`: its name
 * normalised, its description sanitised and capped, its input schema rendered to JSON Schema,
 * sanitised and rebuilt with `z.fromJSONSchema` (so poisoned field descriptions and open
 * objects do not reach the model). The output is the tool's text content (string or content
 * blocks as JSON); a `content_and_artifact` tool's artifact is kept as the artifact.
 *
 * @throws VeridexError `import_invalid` for unusable names or schemas; `tool_definition_invalid`.
 * @example const search = fromLangChainTool(tavilySearch, { safetyClass: 'network', sandbox: { networkAllowlist: ['api.tavily.com'] } });
 */
export function fromLangChainTool(
  lcTool: StructuredToolInterface,
  options: FromLangChainToolOptions,
): GovernedTool<z.ZodType, z.ZodString> {
  return createGovernedTool(
    {
      ...importedLangChainFields(lcTool, options),
      output: z.string(),
      async execute({ input: args, signal, context }) {
        const message = await lcTool.invoke(
          {
            id: context.toolCallId,
            name: lcTool.name,
            args: args as Record<string, unknown>,
            type: 'tool_call',
          },
          // Only the signal: the graph's own config (checkpointer, interrupts) flows in implicitly
          // and must not be replaced.
          { signal },
        );
        if (!isToolMessage(message)) return asText(message);
        const content = asText(message.content);
        return message.artifact === undefined
          ? content
          : { llmOutput: content, artifact: message.artifact };
      },
    },
    'imported',
  );
}

/**
 * The governed fields of an imported LangChain tool — name (normalised), description
 * (sanitised, capped), safety class (raised by annotations), input schema (closed) — plus the
 * governance options given. Shared by {@link fromLangChainTool} and `hostLangChainTool`.
 * @throws VeridexError `import_invalid`, `config_invalid`.
 */
export function importedLangChainFields(
  lcTool: StructuredToolInterface,
  options: FromLangChainToolOptions,
) {
  const { maxDescriptionLength, ...governance } = options;
  const name = normalizeToolName(options.name ?? lcTool.name);
  const where = `LangChain tool "${lcTool.name}"`;
  return {
    ...governance,
    name,
    description: importedDescription(
      lcTool.description,
      name,
      maxDescriptionLength ?? IMPORTED_DESCRIPTION_LIMIT,
    ),
    safetyClass: classWithAnnotations(options.safetyClass, options.annotations),
    input: importJsonSchema(inputJsonSchema(lcTool.schema), where),
  };
}

function inputJsonSchema(schema: unknown): unknown {
  if (typeof schema === 'object' && schema !== null && '_zod' in schema) {
    // Shared sub-schemas as `$ref`s: written out in full, a schema whose every level uses the
    // one below twice would be exponential before `importJsonSchema` could bound it.
    return z.toJSONSchema(schema as z.ZodType, {
      io: 'input',
      unrepresentable: 'any',
      reused: 'ref',
    });
  }
  // zod 3 schemas (and standard JSON Schema objects) through LangChain's own converter.
  return toJsonSchema(schema as Parameters<typeof toJsonSchema>[0]);
}

/** Tool output as text: strings as they are, anything else (content blocks) as JSON. */
export function asText(value: unknown): string {
  if (typeof value === 'string') return value;
  return JSON.stringify(value) ?? '';
}
