import { type FunctionTool, RunContext } from '@openai/agents';
import { z } from 'zod';
import {
  classWithAnnotations,
  IMPORTED_DESCRIPTION_LIMIT,
  type ImportedGovernance,
  importedDescription,
  importJsonSchema,
  normalizeToolName,
} from '../adapters/imported-metadata.js';
import { VeridexError } from '../errors/index.js';
import { createGovernedTool } from '../tools/tool.js';
import type { GovernedTool } from '../tools/types.js';

/** Options for {@link fromOpenAIAgentsTool}: the governance the SDK tool did not have. */
export interface FromOpenAIAgentsToolOptions extends ImportedGovernance {
  /** Name override (normalised like the original). */
  name?: string;
  /** The SDK run context the tool's `invoke` receives (default: an empty one). */
  context?: unknown;
}

/**
 * Imports an `@openai/agents` function tool as a governed tool labelled `trust: 'imported'`:
 * name normalised, description sanitised and capped, its JSON Schema parameters sanitised and
 * rebuilt as a closed zod schema. The governed runtime decides whether it runs (policy,
 * approvals, sandbox, idempotency); the SDK tool's own `needsApproval` is still honoured: if
 * it asks for approval for these arguments and no human approved the call, the call fails
 * with `policy_denied` instead of running. Hosted tools (file search, web search, computer)
 * have no local code and are refused.
 *
 * The SDK turns a failing `execute` into an error string by default; such a string is the
 * tool's output here too.
 *
 * @throws VeridexError `import_invalid` for hosted tools, unusable names or schemas.
 * @example const weather = fromOpenAIAgentsTool(getWeatherTool, { safetyClass: 'network', sandbox: { networkAllowlist: ['api.weather.example'] } });
 */
export function fromOpenAIAgentsTool(
  sdkTool: FunctionTool<unknown, never, unknown> | { type: string; name: string },
  options: FromOpenAIAgentsToolOptions,
): GovernedTool<z.ZodType, z.ZodString> {
  if (sdkTool.type !== 'function') {
    throw new VeridexError(
      'import_invalid',
      `OpenAI Agents tool "${sdkTool.name}" is a hosted ${sdkTool.type} tool; only function tools run locally and can be governed.`,
    );
  }
  const functionTool = sdkTool as FunctionTool<unknown, never, unknown>;
  const name = normalizeToolName(options.name ?? functionTool.name);
  const { context, maxDescriptionLength, name: _name, ...governance } = options;
  return createGovernedTool(
    {
      ...governance,
      name,
      description: importedDescription(
        functionTool.description,
        name,
        maxDescriptionLength ?? IMPORTED_DESCRIPTION_LIMIT,
      ),
      safetyClass: classWithAnnotations(options.safetyClass, options.annotations),
      input: importJsonSchema(functionTool.parameters, `OpenAI Agents tool "${functionTool.name}"`),
      output: z.string(),
      async execute({ input, signal, context: call }) {
        const runContext = new RunContext(context);
        const needsApproval = await functionTool.needsApproval(
          runContext,
          input as never,
          call.toolCallId,
        );
        if (needsApproval && call.approvedBy.length === 0) {
          throw new VeridexError(
            'policy_denied',
            `"${name}" asks for human approval for these arguments and none was given; route it to approvers (approval: { route: 'human_required' }).`,
          );
        }
        const output = await functionTool.invoke(runContext, JSON.stringify(input), {
          signal,
          toolCall: {
            type: 'function_call',
            callId: call.toolCallId,
            name: functionTool.name,
            arguments: JSON.stringify(input),
          },
        });
        return typeof output === 'string' ? output : (JSON.stringify(output) ?? '');
      },
    },
    'imported',
  );
}
