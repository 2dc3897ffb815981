import { z } from 'zod';
import { VeridexError } from '../errors/index.js';
import { createGovernedTool } from '../tools/tool.js';
import type { AnyGovernedTool, GovernedTool, ToolExecuteArgs } from '../tools/types.js';
import {
  classWithAnnotations,
  IMPORTED_DESCRIPTION_LIMIT,
  type ImportedGovernance,
  importedDescription,
  importJsonSchema,
  normalizeToolName,
} from './imported-metadata.js';

/** An OpenAI function definition (the `function` of a `tools` entry). */
export interface OpenAIFunctionDefinition {
  name: string;
  description?: string;
  parameters?: Record<string, unknown>;
  strict?: boolean;
}

/** An OpenAI `tools` entry. */
export interface OpenAITool {
  type: 'function';
  function: OpenAIFunctionDefinition;
}

/**
 * A governed tool as an OpenAI `tools` entry; `parameters` is zod 4's JSON Schema of the
 * input (what the tool accepts).
 * @example openai.chat.completions.create({ model, messages, tools: [toOpenAIFunction(getWeather)] });
 */
export function toOpenAIFunction(tool: AnyGovernedTool): OpenAITool {
  const { $schema: _dialect, ...parameters } = tool.jsonSchema.input;
  return {
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters },
  };
}

/** Options for {@link fromOpenAIFunction}. */
export interface FromOpenAIFunctionOptions<Output extends z.ZodType>
  extends ImportedGovernance<Output> {
  /** Output schema (default `z.string()`; other return values are then serialised as JSON). */
  output?: Output;
}

/**
 * A governed tool from an OpenAI function definition and its implementation, labelled
 * `trust: 'imported'`: the name normalised, the description sanitised and capped, `parameters`
 * sanitised and turned into a zod schema with zod 4's `z.fromJSONSchema`.
 *
 * @throws VeridexError `import_invalid` for an unusable definition; `tool_definition_invalid`.
 * @example const weather = fromOpenAIFunction(definition, async ({ city }) => lookup(city), { safetyClass: 'read' });
 */
export function fromOpenAIFunction<Output extends z.ZodType = z.ZodString>(
  definition: OpenAIFunctionDefinition | OpenAITool,
  implementation: (
    input: Record<string, unknown>,
    args: ToolExecuteArgs<Record<string, unknown>>,
  ) => unknown,
  options: FromOpenAIFunctionOptions<Output>,
): GovernedTool<z.ZodType, Output> {
  const fn = 'function' in definition ? definition.function : definition;
  if (typeof fn?.name !== 'string')
    throw new VeridexError('import_invalid', 'OpenAI function definition has no name.');
  const name = normalizeToolName(fn.name);
  const input = importJsonSchema(
    fn.parameters ?? { type: 'object', properties: {} },
    `OpenAI function "${fn.name}"`,
  );
  const output = (options.output ?? z.string()) as Output;
  const stringify = options.output === undefined;
  return createGovernedTool(
    {
      ...options,
      name,
      description: importedDescription(
        fn.description,
        name,
        options.maxDescriptionLength ?? IMPORTED_DESCRIPTION_LIMIT,
      ),
      safetyClass: classWithAnnotations(options.safetyClass, options.annotations),
      input,
      output,
      async execute(args) {
        const value = await implementation(
          args.input as Record<string, unknown>,
          args as ToolExecuteArgs<Record<string, unknown>>,
        );
        return (
          stringify && typeof value !== 'string' ? (JSON.stringify(value) ?? '') : value
        ) as z.input<Output>;
      },
    },
    'imported',
  );
}
