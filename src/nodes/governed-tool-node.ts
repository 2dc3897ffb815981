import { randomUUID } from 'node:crypto';
import {
  type BaseMessage,
  isAIMessage,
  isBaseMessage,
  type ToolCall,
  type ToolMessage,
} from '@langchain/core/messages';
import { Command, isCommand, type LangGraphRunnableConfig, Send } from '@langchain/langgraph';
import { ToolNode } from '@langchain/langgraph/prebuilt';
import type { ApprovalManager } from '../approvals/index.js';
import { type AuditLog, deriveEventId } from '../audit/index.js';
import { VeridexError } from '../errors/index.js';
import { scopeMetadata } from '../governance/governance-runtime.js';
import {
  type CallScope,
  decideCalls,
  executePlan,
  failureOf,
  type GovernanceOptions,
  type GovernanceRuntime,
  resolveRuntime,
} from '../governance/index.js';
import { checkProtectedNames } from '../governance/protected-names.js';
import { checkReviewNames } from '../governance/review-config.js';
import { sinkOf } from '../governance/stream-events.js';
import { withToolCallbacks } from '../governance/tool-callbacks.js';
import type { PolicyEngine } from '../policy/index.js';
import { bindingTool } from '../tools/binding-tool.js';
import {
  MemoryIdempotencyStore,
  type ToolRegistry,
  type ToolRunResult,
  type ToolRuntime,
} from '../tools/index.js';
import { runIdOf } from './evidence-node.js';
import { classifyTools, type NodeTool, type ToolClassification } from './node-tools.js';
import { answerCall } from './tool-answer.js';
import { type HandleToolErrors, VERIDEX_CODE_KEY } from './tool-errors.js';

/**
 * Options for {@link governedToolNode}: the tools, how plain LangChain tools among them are
 * classified, ToolNode's own options, and the governance every call runs under (every field of
 * `GovernanceOptions` has a secure default — pass `db` to make approvals, the audit log and the
 * at-most-once ledger durable and shared with other processes).
 */
export interface GovernedToolNodeOptions extends GovernanceOptions, ToolClassification {
  /**
   * The tools the model may call: governed tools, plain LangChain tools (governed with
   * `safetyClasses` / `defaultSafetyClass`), or a registry that already pins governed tools.
   * Given positionally instead when the node is built as `governedToolNode([tools], options)`.
   */
  tools?: readonly NodeTool[] | ToolRegistry;
  /** Node name (default `tools`). */
  name?: string;
  /** Run tags, as for any runnable. */
  tags?: string[];
  /** What a failing tool answers (see {@link HandleToolErrors}); default `true`. */
  handleToolErrors?: HandleToolErrors;
}

/** Positional options: everything but `tools`. */
export type GovernedToolNodeExtraOptions = Omit<GovernedToolNodeOptions, 'tools'>;

type NodeInput =
  | BaseMessage[]
  | { messages: BaseMessage[] }
  | ({ lg_tool_call: ToolCall } & Record<string, unknown>);

type Answer = ToolMessage | Command;

/**
 * What the node returns, as `ToolNode` does: tool messages (a list for list input, else a
 * `messages` update), or — when a tool returned a `Command` — a list of Commands and updates.
 */
export type GovernedToolNodeOutput =
  | ToolMessage[]
  | { messages: ToolMessage[] }
  | Array<Command | ToolMessage[] | { messages: ToolMessage[] }>;

/**
 * LangGraph's `ToolNode`, governed — a drop-in: the same constructor shapes, inputs and outputs.
 * For the last AI message's tool calls it first checks everything — pins, arguments, policy —
 * for all calls, then acts: denied calls become error `ToolMessage`s the model can read;
 * escalated calls raise ONE `interrupt()` listing every pending approval (or, in a graph
 * without a checkpointer, are refused with `approval_required`); allowed and approved calls
 * run through the sandbox with idempotency, output validation and the sanitiser, exactly once
 * across resumes and re-runs. Tools get the runtime ToolNode gives them (`state`,
 * `toolCallId`, `config`, store, writer); a tool's `Command` is applied as ToolNode applies it.
 * Interrupts raised inside tools are re-thrown untouched.
 *
 * Without `configurable.thread_id` (a direct `node.invoke(...)`, a graph without a
 * checkpointer) each invocation is its own ephemeral scope: every call is still governed and
 * audited, but nothing can be approved later and at-most-once does not reach beyond the
 * invocation.
 */
export class GovernedToolNode extends ToolNode {
  readonly registry: ToolRegistry;
  readonly policy: PolicyEngine;
  readonly approvals: ApprovalManager;
  readonly audit: AuditLog;
  /** What every call of this node is decided and executed with. */
  readonly runtime: GovernanceRuntime;
  readonly #hosted: Map<string, string>;
  readonly #handleToolErrors: HandleToolErrors;

  constructor(
    tools: readonly NodeTool[] | ToolRegistry | GovernedToolNodeOptions,
    extra: GovernedToolNodeExtraOptions = {},
  ) {
    const options = positional(tools, extra);
    const { registry, hosted } = classifyTools(options.tools ?? [], options);
    super(
      registry.list().map((tool) => bindingTool(tool, 'the governed tool node')),
      {
        name: options.name ?? 'tools',
        ...(options.tags ? { tags: options.tags } : {}),
      },
    );
    this.runtime = resolveRuntime(options, registry);
    const names = this.runtime.registry.list().map((tool) => tool.name);
    checkReviewNames(
      Object.keys(options.review ?? {}).filter((key) => !names.includes(key)),
      names,
      'governedToolNode',
    );
    checkProtectedNames(this.runtime.policy, names, 'governedToolNode');
    this.registry = this.runtime.registry;
    this.policy = this.runtime.policy;
    this.approvals = this.runtime.approvals;
    this.audit = this.runtime.audit;
    this.#hosted = hosted;
    this.#handleToolErrors = options.handleToolErrors ?? true;
    this.handleToolErrors = this.#handleToolErrors !== false;
  }

  protected override async run(
    input: unknown,
    config: LangGraphRunnableConfig,
  ): Promise<GovernedToolNodeOutput> {
    const { calls, messages, state, isArray } = extractCalls(input as NodeInput);
    const given = config.configurable?.thread_id;
    const threadId = typeof given === 'string' && given !== '' ? given : undefined;
    // No thread: an ephemeral scope of its own, with a ledger that lives as long as the call.
    const runtime = threadId
      ? this.runtime
      : { ...this.runtime, idempotency: new MemoryIdempotencyStore() };
    const scopeId = threadId ?? `ephemeral-${randomUUID()}`;
    const emit = sinkOf(config.writer);
    const scope: CallScope = {
      threadId: scopeId,
      runId: runIdOf(config, scopeId),
      turnIndex: Math.max(0, messages.filter((message) => isAIMessage(message)).length - 1),
      metadata: scopeMetadata(config.configurable),
      ...(config.signal ? { signal: config.signal } : {}),
      runtimeFor: (call) => toolRuntime(call, state, config),
      ...(emit ? { emit } : {}),
    };

    // 1–2. Decide every call before anything runs; wait for people through interrupt().
    const plans = await decideCalls(calls, runtime, scope, { suspend: hasCheckpointer(config) });

    // 3. Act: run what is allowed, in parallel; everything else answers with an error message.
    const outputs = await Promise.all(
      plans.map(async (plan) =>
        this.#answer(
          plan.call,
          plan.kind === 'allowed'
            ? await withToolCallbacks(config, plan.call, () => executePlan(plan, runtime, scope))
            : failureOf(plan, runtime),
        ),
      ),
    );
    const exhausted = plans.find(
      (plan) => plan.kind === 'failed' && plan.code === 'budget_exhausted',
    );
    if (exhausted) {
      await this.audit.append({
        threadId: scopeId,
        runId: scope.runId,
        turnIndex: scope.turnIndex,
        eventId: deriveEventId(scopeId, 'budget_exhausted', exhausted.call.id ?? ''),
        type: 'budget_exhausted',
        payload: {
          toolCallId: exhausted.call.id ?? '',
          reason: exhausted.kind === 'failed' ? exhausted.message : '',
        },
      });
    }
    // Every call is answered, so the step is complete; `routeAfterTools` ends an exhausted run.
    return combineOutputs(outputs, isArray);
  }

  /** The ToolMessage (or the tool's Command) answering one call. */
  #answer(call: ToolCall, result: ToolRunResult): Promise<Answer> {
    return answerCall(call, result, {
      hosted: this.#hosted,
      scrubber: this.audit.scrubber,
      handleToolErrors: this.#handleToolErrors,
      ...(this.runtime.maxOutputBytes ? { maxOutputBytes: this.runtime.maxOutputBytes } : {}),
    });
  }
}

/**
 * Creates a {@link GovernedToolNode}: use it where `ToolNode` was — in your own `StateGraph`
 * (`addNode('tools', governedToolNode([search, transfer], { policy }))`) or as
 * `createReactAgent({ tools: node })`.
 *
 * @example
 * const tools = governedToolNode([tavilySearch, transfer], { safetyClasses: { tavily_search: 'network' }, policy, approvals, audit });
 * const graph = new StateGraph(MessagesAnnotation).addNode('tools', tools) // ...
 */
export function governedToolNode(
  tools: readonly NodeTool[] | ToolRegistry | GovernedToolNodeOptions,
  options: GovernedToolNodeExtraOptions = {},
): GovernedToolNode {
  return new GovernedToolNode(tools, options);
}

export { VERIDEX_CODE_KEY };

function positional(
  tools: readonly NodeTool[] | ToolRegistry | GovernedToolNodeOptions,
  extra: GovernedToolNodeExtraOptions,
): GovernedToolNodeOptions {
  if (Array.isArray(tools) || isRegistry(tools)) return { ...extra, tools };
  if (typeof tools !== 'object' || tools === null) {
    throw new VeridexError(
      'config_invalid',
      'governedToolNode expects a list of tools (and options), or an options object with `tools`.',
    );
  }
  return { ...(tools as GovernedToolNodeOptions), ...extra };
}

function isRegistry(value: unknown): value is ToolRegistry {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as ToolRegistry).check === 'function' &&
    typeof (value as ToolRegistry).list === 'function'
  );
}

function extractCalls(input: NodeInput): {
  calls: ToolCall[];
  messages: BaseMessage[];
  state: unknown;
  isArray: boolean;
} {
  if (typeof input === 'object' && input !== null && 'lg_tool_call' in input) {
    const { lg_tool_call: call, ...state } = input;
    const messages = Array.isArray(state.messages) ? (state.messages as BaseMessage[]) : [];
    return { calls: [call], messages, state, isArray: false };
  }
  const isArray = Array.isArray(input);
  const messages = isArray ? input : (input as { messages?: BaseMessage[] } | null)?.messages;
  if (!Array.isArray(messages) || !messages.every((message) => isBaseMessage(message))) {
    throw new VeridexError(
      'config_invalid',
      'The governed tool node expects BaseMessage[] or { messages: BaseMessage[] } as input.',
    );
  }
  const last = messages.findLast((message) => isAIMessage(message));
  if (!last || !isAIMessage(last)) {
    throw new VeridexError(
      'config_invalid',
      'The governed tool node only accepts AIMessages as input: it answers the tool calls of the last AI message, and there is none.',
    );
  }
  const answered = new Set(
    messages
      .filter((message) => message.getType() === 'tool')
      .map((message) => (message as ToolMessage).tool_call_id),
  );
  const calls = (last.tool_calls ?? []).filter((call) => !call.id || !answered.has(call.id));
  return { calls, messages, state: input, isArray };
}

/** What LangGraph's ToolNode gives a tool as its runtime. */
function toolRuntime(call: ToolCall, state: unknown, config: LangGraphRunnableConfig): ToolRuntime {
  const extended = config as LangGraphRunnableConfig & { context?: unknown };
  return {
    toolCallId: call.id ?? '',
    state,
    config: config as Record<string, unknown>,
    context: extended.context,
    store: config.store ?? null,
    writer: config.writer ?? config.configurable?.writer ?? null,
  };
}

// The config key under which LangGraph hands a running graph's checkpointer to its nodes;
// `interrupt()` needs it, so without it approvals are refused rather than waited for.
function hasCheckpointer(config: LangGraphRunnableConfig): boolean {
  return Boolean(config.configurable?.__pregel_checkpointer);
}

/** ToolNode's output: messages, or Commands with the messages beside them (parent Sends merged). */
function combineOutputs(outputs: Answer[], isArray: boolean): GovernedToolNodeOutput {
  if (!outputs.some((output) => isCommand(output))) {
    const messages = outputs as ToolMessage[];
    return isArray ? messages : { messages };
  }
  const combined: Array<Command | ToolMessage[] | { messages: ToolMessage[] }> = [];
  let parent: Command | undefined;
  for (const output of outputs) {
    if (!isCommand(output)) {
      combined.push(isArray ? [output as ToolMessage] : { messages: [output as ToolMessage] });
      continue;
    }
    const command = output as Command;
    const sends = Array.isArray(command.goto) ? command.goto : [];
    if (
      command.graph === Command.PARENT &&
      Array.isArray(command.goto) &&
      sends.every((target) => target instanceof Send)
    ) {
      if (parent) (parent.goto as Send[]).push(...(sends as Send[]));
      else parent = new Command({ graph: Command.PARENT, goto: [...(sends as Send[])] });
    } else combined.push(command);
  }
  if (parent) combined.push(parent);
  return combined;
}
