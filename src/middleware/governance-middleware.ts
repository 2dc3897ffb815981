import type { BaseMessage } from '@langchain/core/messages';
import { createMiddleware } from 'langchain';
import type { ContextCompiler } from '../context/index.js';
import { VeridexError } from '../errors/index.js';
import {
  type GovernanceOptions,
  type GovernanceRuntime,
  resolveRuntime,
} from '../governance/index.js';
import { checkProtectedNames } from '../governance/protected-names.js';
import type { SealedEvidence } from '../nodes/evidence-node.js';
import { MemoryAnnotation, memoryNodes } from '../nodes/memory-nodes.js';
import type { NodeTool, ToolClassification } from '../nodes/node-tools.js';
import type { RunBudget } from '../nodes/run-budget.js';
import { rules } from '../policy/index.js';
import type { HookRuntime } from './call-scope.js';
import { MiddlewareTools } from './middleware-tools.js';
import {
  beforeModelCall,
  compileModelRequest,
  finishRun,
  type MiddlewareEvidenceOptions,
  type MiddlewareMemoryOptions,
  type ModelGovernance,
  type ModelRequestLike,
} from './model-hooks.js';
import { RunClock } from './run-clock.js';
import type { RunStartHook } from './run-start.js';
import { approvalGate, governToolCall, type ToolCallRequestLike } from './tool-hooks.js';

/**
 * Options of {@link governanceMiddleware}: the governance of `governedToolNode` (policy,
 * approvals, audit, idempotency, sandbox, … — each with its secure default; pass `db` to make
 * them durable and shared across processes), the tools it brings, and the model-side steps.
 */
export interface GovernanceMiddlewareOptions extends GovernanceOptions, ToolClassification {
  /**
   * Tools the middleware adds to the agent: governed tools (run in the sandbox) and plain
   * LangChain tools (run by the agent's tool node, inside the ledger). Their calls are decided
   * by the approval gate right after the model's turn, before any tool runs. Tools given to
   * `createAgent` itself are governed too, classified at their first call.
   */
  tools?: readonly NodeTool[];
  /** Middleware name (default `VeridexGovernance`); unique per agent. */
  name?: string;
  /** Compile the model's input within the effective window (`wrapModelCall`). */
  context?: ContextCompiler;
  /** Recall memories before each model call and distil the run after it. */
  memory?: MiddlewareMemoryOptions;
  /** Seal each finished run into a signed evidence bundle (`afterAgent`). */
  evidence?: MiddlewareEvidenceOptions;
  /**
   * Run budgets: `maxTokens` (checked before each model call), `maxToolCalls`/`toolCosts` (a
   * `rules.callLimit` added to the policy engine), `maxWallClockMs` (per run or resume, time
   * waiting for approvals excluded) and `signal` (external cancellation). Exhaustion ends the
   * run at its last completed step with a `budget_exhausted` event.
   */
  budget?: RunBudget;
  /**
   * What a rejected call does to the rest of its model turn. `run_others` (default): the
   * rejection answers that call and the turn's other cleared calls run. `return_to_model`
   * (LangChain's `humanInTheLoopMiddleware`): none of the turn's calls runs; each is answered
   * (`approval_rejected`, or `turn_rejected` for the others) and the model goes again.
   */
  onRejection?: 'run_others' | 'return_to_model';
}

/** What {@link governanceMiddleware} returns: a LangChain middleware, and its governance. */
export type GovernanceMiddleware = ReturnType<typeof createMiddleware> & {
  /** The runtime every call is decided and executed with (registry, policy, approvals, audit, ledger). */
  readonly governance: GovernanceRuntime;
  /** The evidence bundle sealed at the end of the thread's last finished run. */
  evidence(threadId: string): SealedEvidence | undefined;
  /**
   * Governs createAgent's own tools now rather than at the first model request, so a thread
   * resumed in a new process gets one interrupt per turn too (`resumeThread` and
   * `startResumer` call it for you with the agent's tools).
   * @throws VeridexError `config_invalid` for an unclassified tool or an unknown key.
   */
  useAgentTools(agentTools: readonly unknown[]): void;
};

/**
 * Governance for LangChain v1's `createAgent`, as one middleware: every tool call goes
 * through the same pipeline as `governedToolNode` — pins, validation, policy, approvals
 * (an `interrupt()` in the shape of LangChain's `humanInTheLoopMiddleware`, plus approval id,
 * route, quorum, expiry and proposal hash; resumed with signed decisions, in our form or
 * LangChain's `{ decisions: [...] }`), sandbox, sanitiser and the at-most-once ledger — with
 * the model side around it: run budgets (`beforeModel`), the context compiler
 * (`wrapModelCall`), memory, and the evidence bundle sealed when the run ends (`afterAgent`).
 * Only the hooks the options need are added; each run's `run_started` event is written by the
 * budget or memory step, else by the model wrapper, else with the run's first governed tool
 * calls (a run that calls no tool then records nothing).
 *
 * Order in `middleware` (first listed is outermost): put it first so every other middleware's
 * tool calls and model calls happen inside its governance; middleware listed after it wraps
 * the execution of the agent's plain tools, inside the ledger.
 *
 * @throws VeridexError `config_invalid` for a missing or ambiguous tool classification: a plain
 * tool with neither a `safetyClasses` entry nor an explicit `defaultSafetyClass`, or a
 * `safetyClasses` key naming no tool (checked here for the middleware's tools, on the first
 * model request for createAgent's).
 * @example
 * const agent = createAgent({ model, tools: [search], checkpointer,
 *   middleware: [governanceMiddleware({ db, tools: [transfer], policy, evidence: { signers: [signer] } })] });
 */
export function governanceMiddleware(
  options: GovernanceMiddlewareOptions = {},
): GovernanceMiddleware {
  if (
    options.onRejection !== undefined &&
    options.onRejection !== 'run_others' &&
    options.onRejection !== 'return_to_model'
  ) {
    throw new VeridexError(
      'config_invalid',
      `governanceMiddleware: onRejection must be "run_others" or "return_to_model", not ${JSON.stringify(options.onRejection)}.`,
    );
  }
  const tools = new MiddlewareTools(
    options.tools ?? [],
    options,
    Object.keys(options.review ?? {}),
  );
  const runtime = resolveRuntime(options, tools.registry);
  const budget = options.budget;
  if (budget?.maxToolCalls !== undefined) {
    runtime.policy.use(
      rules.callLimit({
        perRun: budget.maxToolCalls,
        ...(budget.toolCosts ? { costs: budget.toolCosts } : {}),
      }),
    );
  }
  const clock = new RunClock(budget?.maxWallClockMs);
  // createAgent's own tools, once seen; then every name a protecting rule gives must be a tool.
  let namesChecked = false;
  const learn = (agentTools: readonly unknown[]) => {
    tools.learn(agentTools);
    if (namesChecked) return;
    checkProtectedNames(runtime.policy, tools.names, 'governanceMiddleware');
    namesChecked = true;
  };
  type State = { messages: BaseMessage[] } & Record<string, unknown>;
  // Each hook other than the wrappers is a node of the agent's graph, a step (and a checkpoint)
  // on every turn; each wrapper costs on every call it wraps: only the ones a configuration
  // needs are added.
  const budgeted =
    budget !== undefined &&
    (budget.maxTokens !== undefined ||
      budget.maxToolCalls !== undefined ||
      budget.maxWallClockMs !== undefined ||
      budget.signal !== undefined);
  const modelStep = budgeted || options.memory !== undefined;
  const compiles = options.context !== undefined || options.evidence !== undefined;
  // createAgent's own tools are first visible in a model request: they are classified there
  // (and `safetyClasses`/`review` keys naming them checked) before the model can propose a
  // call, so the approval gate decides their calls with the middleware's.
  const runStart: RunStartHook = modelStep
    ? 'beforeModel'
    : compiles
      ? 'wrapModelCall'
      : 'toolCalls';
  const toolSide = {
    runtime,
    tools,
    clock,
    signal: budget?.signal,
    startsRuns: runStart === 'toolCalls',
    onRejection: options.onRejection,
  };
  const sealed = new Map<string, SealedEvidence>();
  const modelSide: ModelGovernance = {
    audit: runtime.audit,
    clock,
    maxTokens: budget?.maxTokens,
    signal: budget?.signal,
    context: options.context,
    memory: options.memory ? memoryNodes(options.memory.manager, options.memory) : undefined,
    evidence:
      options.evidence && options.evidence.db === undefined && options.db
        ? { ...options.evidence, db: options.db }
        : options.evidence,
    sealed,
    runStart,
  };
  const ending = modelStep || options.evidence !== undefined;
  const hooks = {
    name: options.name ?? 'VeridexGovernance',
    ...(options.memory ? { stateSchema: MemoryAnnotation } : {}),
    tools: tools.bindings,
    ...(modelStep
      ? {
          beforeModel: {
            canJumpTo: ['end'],
            hook: (state: unknown, hook: unknown) =>
              beforeModelCall(state as State, hook as HookRuntime, modelSide),
          },
        }
      : {}),
    wrapModelCall: async (request: unknown, handler: (request: unknown) => unknown) => {
      learn((request as ModelRequestLike).tools ?? []);
      return handler(
        compiles ? await compileModelRequest(request as ModelRequestLike, modelSide) : request,
      );
    },
    afterModel: {
      canJumpTo: ['model'],
      hook: (state: unknown, hook: unknown) =>
        approvalGate(state as State, hook as HookRuntime, toolSide),
    },
    wrapToolCall: (request: unknown, handler: unknown) =>
      governToolCall(request as ToolCallRequestLike, handler as never, toolSide),
    ...(ending
      ? {
          afterAgent: (state: unknown, hook: unknown) =>
            finishRun(state as State, hook as HookRuntime, modelSide),
        }
      : {}),
  };
  // The hooks are typed against our narrow views of LangChain's requests; the shapes match.
  const middleware = createMiddleware(hooks as unknown as Parameters<typeof createMiddleware>[0]);
  return Object.assign(middleware, {
    governance: runtime,
    evidence: (threadId: string) => sealed.get(threadId),
    useAgentTools: learn,
  }) as GovernanceMiddleware;
}
