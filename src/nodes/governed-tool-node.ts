import {
  type BaseMessage,
  isAIMessage,
  isBaseMessage,
  type ToolCall,
  ToolMessage,
} from '@langchain/core/messages';
import { DynamicStructuredTool } from '@langchain/core/tools';
import { interrupt, type LangGraphRunnableConfig } from '@langchain/langgraph';
import { ToolNode } from '@langchain/langgraph/prebuilt';
import { ApprovalManager } from '../approvals/index.js';
import { AuditBatch, AuditLog, deriveEventId } from '../audit/index.js';
import { VeridexError } from '../errors/index.js';
import { PolicyEngine } from '../policy/index.js';
import type { Sandbox } from '../sandbox/index.js';
import {
  type AnyGovernedTool,
  type IdempotencyStore,
  MemoryIdempotencyStore,
  runTool,
  type SecretsProvider,
  ToolRegistry,
} from '../tools/index.js';
import { applyResume, approvalsInterrupt } from './approval-interrupt.js';
import {
  type AllowedPlan,
  type CallPlan,
  type PendingPlan,
  type PlanContext,
  planCall,
  refreshPlan,
} from './call-planner.js';
import { runIdOf } from './evidence-node.js';

/** Options for {@link governedToolNode}. */
export interface GovernedToolNodeOptions {
  /** The governed tools the model may call (or a registry that already pins them). */
  tools: readonly AnyGovernedTool[] | ToolRegistry;
  /** Default: a `PolicyEngine` with the safety-class defaults, writing to `audit`. */
  policy?: PolicyEngine;
  /** Default: an in-memory `ApprovalManager`; pass one over the database to decide from other processes. */
  approvals?: ApprovalManager;
  /** Default: an in-memory `AuditLog`. */
  audit?: AuditLog;
  /** Where tools execute. Default: `DenyAllSandbox` (no network, no file system). */
  sandbox?: Sandbox;
  secrets?: SecretsProvider;
  /**
   * Records every executed call so it runs at most once across re-runs of this node.
   * Default: in memory (one process); use `PostgresIdempotencyStore` for crash safety.
   */
  idempotency?: IdempotencyStore;
  /** Identity of the proposing agent: an approver with this name never counts. Default `agent`. */
  agentId?: string;
  /** Node name (default `tools`). */
  name?: string;
}

type NodeInput =
  | BaseMessage[]
  | { messages: BaseMessage[] }
  | ({ lg_tool_call: ToolCall } & Record<string, unknown>);

/**
 * LangGraph's `ToolNode`, governed. For the last AI message's tool calls it first checks
 * everything — pins, arguments, policy — for all calls, then acts: denied calls become error
 * `ToolMessage`s the model can read; escalated calls raise ONE `interrupt()` listing every
 * pending approval; allowed and approved calls run through the sandbox with idempotency,
 * output validation and the sanitiser, exactly once across resumes and re-runs.
 * Interrupts raised inside tools are re-thrown untouched.
 */
/** What the node returns: tool messages, as a list (list input) or a `messages` update. */
export type GovernedToolNodeOutput = ToolMessage[] | { messages: ToolMessage[] };

export class GovernedToolNode extends ToolNode<GovernedToolNodeOutput> {
  readonly registry: ToolRegistry;
  readonly policy: PolicyEngine;
  readonly approvals: ApprovalManager;
  readonly audit: AuditLog;
  readonly #options: GovernedToolNodeOptions;
  readonly #idempotency: IdempotencyStore;

  constructor(options: GovernedToolNodeOptions) {
    const registry =
      options.tools instanceof ToolRegistry
        ? options.tools
        : new ToolRegistry().register(...options.tools);
    super(registry.list().map(bindingTool), { name: options.name ?? 'tools' });
    this.registry = registry;
    this.audit = options.audit ?? new AuditLog();
    this.policy = options.policy ?? new PolicyEngine({ audit: this.audit });
    this.approvals = options.approvals ?? new ApprovalManager({ audit: this.audit });
    this.#idempotency = options.idempotency ?? new MemoryIdempotencyStore();
    this.#options = options;
    if (options.secrets) options.secrets.registerWith(this.audit.scrubber);
  }

  protected override async run(
    input: unknown,
    config: LangGraphRunnableConfig,
  ): Promise<GovernedToolNodeOutput> {
    const threadId = config.configurable?.thread_id;
    if (typeof threadId !== 'string' || threadId === '') {
      throw new VeridexError(
        'config_invalid',
        'The governed tool node needs configurable.thread_id: compile the graph with a checkpointer and invoke it with { configurable: { thread_id } }.',
      );
    }
    const { calls, messages, isArray } = extractCalls(input as NodeInput);
    const context: PlanContext = {
      threadId,
      runId: runIdOf(config, threadId),
      turnIndex: Math.max(0, messages.filter((message) => isAIMessage(message)).length - 1),
      proposer: this.#options.agentId ?? 'agent',
      registry: this.registry,
      policy: this.policy,
      approvals: this.approvals,
      audit: this.audit,
      events: new AuditBatch(this.audit),
    };

    // 1. Decide every call before anything runs (sequentially: a deterministic audit order).
    let plans: CallPlan[] = [];
    for (const call of calls) plans.push(await planCall(call, context));
    await context.events.flush();

    // 2. Wait for humans. Each interrupt() returns its resume value when LangGraph re-runs
    //    this node; decisions are replay-safe, so earlier resume values apply only once.
    for (let interruptIndex = 0; ; interruptIndex++) {
      const pending = plans.filter((plan): plan is PendingPlan => plan.kind === 'pending');
      if (pending.length === 0) break;
      await this.audit.append({
        threadId,
        runId: context.runId,
        turnIndex: context.turnIndex,
        eventId: deriveEventId(
          threadId,
          'run_suspended',
          interruptIndex,
          ...pending.map((plan) => plan.request.id),
        ),
        type: 'run_suspended',
        payload: { approvalIds: pending.map((plan) => plan.request.id), interruptIndex },
      });
      const resume = interrupt(approvalsInterrupt(threadId, pending));
      await applyResume(resume, pending, interruptIndex, {
        ...context,
        approvals: this.approvals,
        audit: this.audit,
      });
      plans = await Promise.all(
        plans.map((plan) => (plan.kind === 'pending' ? refreshPlan(plan, context) : plan)),
      );
    }

    // 3. Act: run what is allowed, in parallel; everything else answers with an error message.
    const outputs = await Promise.all(plans.map((plan) => this.#answer(plan, context, config)));
    const exhausted = plans.find(
      (plan) => plan.kind === 'failed' && plan.code === 'budget_exhausted',
    );
    if (exhausted) {
      await this.audit.append({
        threadId,
        runId: context.runId,
        turnIndex: context.turnIndex,
        eventId: deriveEventId(threadId, 'budget_exhausted', exhausted.call.id ?? ''),
        type: 'budget_exhausted',
        payload: {
          toolCallId: exhausted.call.id ?? '',
          reason: exhausted.kind === 'failed' ? exhausted.message : '',
        },
      });
    }
    // Every call is answered, so the step is complete; `routeAfterTools` ends an exhausted run.
    return isArray ? outputs : { messages: outputs };
  }

  async #answer(
    plan: CallPlan,
    context: PlanContext,
    config: LangGraphRunnableConfig,
  ): Promise<ToolMessage> {
    const callId = plan.call.id ?? '';
    if (plan.kind !== 'allowed') {
      const message = plan.kind === 'failed' ? plan.message : 'Not executed.';
      return errorMessage(plan.call, plan.kind === 'failed' ? plan.code : 'policy_denied', message);
    }
    const result = await this.#execute(plan, context, config);
    if (result.status === 'error') return errorMessage(plan.call, result.code, result.message);
    return new ToolMessage({
      tool_call_id: callId,
      name: plan.tool.name,
      status: 'success',
      content: result.content,
      ...(result.artifact !== undefined ? { artifact: result.artifact } : {}),
    });
  }

  #execute(plan: AllowedPlan, context: PlanContext, config: LangGraphRunnableConfig) {
    return runTool(plan.tool, plan.proposal.arguments, {
      threadId: context.threadId,
      toolCallId: plan.proposal.toolCallId,
      runId: context.runId,
      turnIndex: context.turnIndex,
      proposalHash: plan.proposal.hash,
      approvedBy: plan.approvedBy,
      metadata: metadataOf(config),
      registry: this.registry,
      audit: this.audit,
      idempotency: this.#idempotency,
      atMostOnce: true,
      ...(this.#options.sandbox ? { sandbox: this.#options.sandbox } : {}),
      ...(this.#options.secrets ? { secrets: this.#options.secrets } : {}),
      ...(config.signal ? { signal: config.signal } : {}),
    });
  }
}

/**
 * Creates a {@link GovernedToolNode}: use it where `ToolNode` was — in your own `StateGraph`
 * (`addNode('tools', governedToolNode({ tools, ... }))`) or as `createReactAgent({ tools: node })`.
 *
 * @example
 * const tools = governedToolNode({ tools: [getBalance, transfer], policy, approvals, audit });
 * const graph = new StateGraph(MessagesAnnotation).addNode('tools', tools) // ...
 */
export function governedToolNode(options: GovernedToolNodeOptions): GovernedToolNode {
  return new GovernedToolNode(options);
}

function extractCalls(input: NodeInput): {
  calls: ToolCall[];
  messages: BaseMessage[];
  isArray: boolean;
} {
  if (typeof input === 'object' && input !== null && 'lg_tool_call' in input) {
    const { lg_tool_call: call, ...state } = input;
    const messages = Array.isArray(state.messages) ? (state.messages as BaseMessage[]) : [];
    return { calls: [call], messages, isArray: false };
  }
  const isArray = Array.isArray(input);
  const messages = isArray ? input : (input as { messages?: BaseMessage[] }).messages;
  if (!Array.isArray(messages) || !messages.every((message) => isBaseMessage(message))) {
    throw new VeridexError(
      'config_invalid',
      'The governed tool node expects BaseMessage[] or { messages: BaseMessage[] } as input.',
    );
  }
  const answered = new Set(
    messages
      .filter((message) => message.getType() === 'tool')
      .map((message) => (message as ToolMessage).tool_call_id),
  );
  const last = messages.findLast((message) => isAIMessage(message));
  const calls =
    last && isAIMessage(last)
      ? (last.tool_calls ?? []).filter((call) => !call.id || !answered.has(call.id))
      : [];
  return { calls, messages, isArray };
}

/** Key in an error ToolMessage's `additional_kwargs` holding the VeridexError code. */
export const VERIDEX_CODE_KEY = 'veridex_code';

function errorMessage(call: ToolCall, code: string, message: string): ToolMessage {
  return new ToolMessage({
    tool_call_id: call.id ?? '',
    name: call.name,
    status: 'error',
    content: `Error [${code}]: ${message}`,
    additional_kwargs: { [VERIDEX_CODE_KEY]: code },
  });
}

function metadataOf(config: LangGraphRunnableConfig): Record<string, unknown> {
  const metadata: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(config.configurable ?? {})) {
    if (
      !key.startsWith('__') &&
      !key.startsWith('checkpoint') &&
      (typeof value !== 'object' || value === null)
    )
      metadata[key] = value;
  }
  return metadata;
}

// The model binds these schemas (createReactAgent reads `node.tools`); they never execute:
// every call goes through the governed pipeline above.
function bindingTool(tool: AnyGovernedTool) {
  return new DynamicStructuredTool({
    name: tool.name,
    description: tool.description,
    schema: tool.input as never,
    func: async () => {
      throw new VeridexError(
        'config_invalid',
        `"${tool.name}" runs only through the governed tool node.`,
      );
    },
  });
}
