import { randomUUID } from 'node:crypto';
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { type AIMessage, HumanMessage, isAIMessage } from '@langchain/core/messages';
import { type BaseCheckpointSaver, END, START, StateGraph } from '@langchain/langgraph';
import {
  ApprovalManager,
  type ApprovalManagerOptions,
  type DecisionRefusal,
} from '../approvals/index.js';
import {
  AuditLog,
  deriveEventId,
  type EvidenceBundle,
  type EvidenceSigner,
  loadOrCreateSigner,
  PostgresAuditStore,
  sealAuditThread,
} from '../audit/index.js';
import { PostgresCheckpointer } from '../checkpointer/index.js';
import { ContextCompiler, type ContextTool } from '../context/index.js';
import { createDatabase, type Database, migrate } from '../db/index.js';
import { VeridexError } from '../errors/index.js';
import type { PendingApproval, ResumeDecision } from '../governance/approval-interrupt.js';
import { PolicyEngine, type PolicyRule, rules } from '../policy/index.js';
import { InProcessSandbox, type Sandbox } from '../sandbox/index.js';
import {
  type AnyGovernedTool,
  type IdempotencyStore,
  PostgresIdempotencyStore,
  type SecretsProvider,
} from '../tools/index.js';
import { agentModelNode } from './agent-model-node.js';
import { contextNode } from './context-node.js';
import { evidenceNode, type SealedEvidence, sealThreadEvidence } from './evidence-node.js';
import { GovernanceAnnotation, type GovernanceState } from './governance-annotation.js';
import { GovernedToolNode } from './governed-tool-node.js';
import { classifyTools, type NodeTool, type ToolClassification } from './node-tools.js';
import { pendingApprovalInterrupts, resumeThread } from './resume-thread.js';
import { budgetExhausted } from './route-after-tools.js';
import { type RunBudget, runSignal, tokensUsedThisRun } from './run-budget.js';

/** A bundle of tools, rules and nodes that plugs into the agent (e.g. `createTreasuryKit(...)`). */
export interface GovernedAgentPlugin {
  tools?: readonly AnyGovernedTool[];
  policyRules?: readonly PolicyRule[];
}

/**
 * Options for {@link createGovernedAgent}. Everything but `name`, `instructions` and `tools` has
 * a default. Plain LangChain tools among `tools` are classified as for `governedToolNode`:
 * by name in `safetyClasses`, else by an explicit `defaultSafetyClass`, else refused.
 */
export interface GovernedAgentOptions extends ToolClassification {
  name: string;
  /** Default: `ChatOpenAI` when `OPENAI_API_KEY` is set; otherwise pass one (e.g. `scriptedModel([...])`). */
  model?: BaseChatModel;
  instructions: string;
  /** Governed tools, and plain LangChain tools classified by `safetyClasses`/`defaultSafetyClass`. */
  tools: readonly NodeTool[];
  policies?: readonly PolicyRule[];
  plugins?: readonly GovernedAgentPlugin[];
  /** Default: PGlite in `./.veridex/db` (owned and closed by `close()`). */
  database?: Database;
  /** Default: `PostgresCheckpointer` over the database. */
  checkpointer?: BaseCheckpointSaver;
  /** Default: an `AuditLog` in the database. */
  audit?: AuditLog;
  /**
   * Default: an `ApprovalManager` over the database (so `veridex approvals` sees the requests),
   * with the approver directory stored there, signed decisions, and `operators`.
   */
  approvals?: ApprovalManager;
  /** People who operate the agent: they never approve its proposals (used by the default `approvals`). */
  operators?: readonly string[];
  /**
   * Decision authentication of the default `approvals`: `signed` (default) or the explicit
   * `unverified` development mode. Ignored when you pass `approvals`.
   */
  identity?: ApprovalManagerOptions['identity'];
  /** Default: the Ed25519 key in `./.veridex/keys`, generated on first use. */
  evidenceSigner?: EvidenceSigner;
  /** Where completed runs' bundles are written. Default `./.veridex/evidence`; `false` to skip. */
  evidenceDir?: string | false;
  /** Default: `InProcessSandbox` with an empty network allowlist. */
  sandbox?: Sandbox;
  secrets?: SecretsProvider;
  /** Default: `PostgresIdempotencyStore` over the database. */
  idempotency?: IdempotencyStore;
  /** Compile the model's context within a token budget. Default: on, sized for the model. */
  context?: ContextCompiler | false;
  budget?: RunBudget;
  /** Identity of the agent as a proposer (never counts as an approver). Default: `name`. */
  agentId?: string;
}

/** The outcome of {@link GovernedAgent.run} and {@link GovernedAgent.resume} (the seeds' RunResult, on LangGraph). */
export interface RunResult {
  status: 'completed' | 'suspended' | 'failed' | 'budget_exhausted' | 'cancelled';
  threadId: string;
  runId: string;
  /** The last AI message's text. */
  output: string;
  /** Approvals the run waits for (status `suspended`), with the decisions counted so far. */
  pendingApprovals: PendingApproval[];
  /** Decisions of the last resume that did not count, and why (status `suspended`). */
  refusals: DecisionRefusal[];
  /** The signed evidence of a completed run. */
  evidenceBundle?: EvidenceBundle;
  /** Where that bundle was written. */
  evidencePath?: string;
  /** Model tokens this run spent. */
  tokensUsed: number;
  /** Why a run failed or was cancelled. */
  error?: { code: string; message: string };
}

/** A prebuilt governed agent: model → governed tools loop with context, budgets and evidence. */
export interface GovernedAgent {
  // biome-ignore lint/suspicious/noExplicitAny: the compiled graph's generic parameters are internal.
  graph: any;
  audit: AuditLog;
  approvals: ApprovalManager;
  database: Database;
  /** Starts a run: one user message on a (new or existing) thread. */
  run(prompt: string, options?: { threadId?: string }): Promise<RunResult>;
  /** Continues a suspended run, applying decisions (or re-reading decisions made elsewhere). */
  resume(
    threadId: string,
    decisions?: ResumeDecision | readonly ResumeDecision[],
  ): Promise<RunResult>;
  /** Seals the thread's events so far into a signed bundle. */
  getEvidence(threadId: string): Promise<EvidenceBundle>;
  /** Closes what the agent opened (the default database). */
  close(): Promise<void>;
}

/**
 * Builds a governed agent on LangGraph: a `StateGraph` of context compilation → model →
 * governed tool node (policy, approvals via `interrupt()`, sandbox, idempotency) → … →
 * evidence, with every default from DESIGN.md so that it runs with no configuration.
 *
 * @example
 * const agent = await createGovernedAgent({ name: 'payout-bot', model, instructions, tools: kit.tools, plugins: [kit] });
 * const first = await agent.run('Pay $50,000 to Acme');      // status 'suspended'
 * const [request] = first.pendingApprovals;
 * await agent.resume(first.threadId, signDecision({ request, decision: 'approve', approver: 'alice' }, aliceKey));
 * const done = await agent.resume(first.threadId);            // 'suspended' (1 of 2) or 'completed'
 */
export async function createGovernedAgent(options: GovernedAgentOptions): Promise<GovernedAgent> {
  // Configuration mistakes are found before any I/O: the tools' classification (a typo in
  // safetyClasses, a plain tool nobody classified), then a missing model.
  const tools = [
    ...options.tools,
    ...(options.plugins ?? []).flatMap((plugin) => plugin.tools ?? []),
  ];
  const classification = {
    ...(options.safetyClasses ? { safetyClasses: options.safetyClasses } : {}),
    ...(options.defaultSafetyClass ? { defaultSafetyClass: options.defaultSafetyClass } : {}),
  };
  classifyTools(tools, classification, true, 'createGovernedAgent');
  const model = options.model ?? (await defaultModel());
  const ownsDatabase = !options.database;
  const database = options.database ?? (await createDatabase());
  await migrate(database);
  const audit = options.audit ?? new AuditLog({ store: new PostgresAuditStore(database) });
  const approvals =
    options.approvals ??
    new ApprovalManager({
      db: database,
      audit,
      ...(options.operators ? { operators: options.operators } : {}),
      ...(options.identity ? { identity: options.identity } : {}),
    });
  const signer = options.evidenceSigner ?? loadOrCreateSigner().signer;
  const agentId = options.agentId ?? options.name;
  const plugins = options.plugins ?? [];
  const budget = options.budget;
  const policy = new PolicyEngine({
    audit,
    rules: [
      ...(options.policies ?? []),
      ...plugins.flatMap((plugin) => plugin.policyRules ?? []),
      ...(budget?.maxToolCalls !== undefined
        ? [
            rules.callLimit({
              perRun: budget.maxToolCalls,
              ...(budget.toolCosts ? { costs: budget.toolCosts } : {}),
            }),
          ]
        : []),
    ],
  });
  const toolNode = new GovernedToolNode({
    tools,
    ...classification,
    policy,
    approvals,
    audit,
    agentId,
    sandbox: options.sandbox ?? new InProcessSandbox({ networkAllowlist: [] }),
    idempotency: options.idempotency ?? new PostgresIdempotencyStore(database),
    ...(options.secrets ? { secrets: options.secrets } : {}),
  });
  const bound = model.bindTools ? model.bindTools(toolNode.tools) : model;
  const compiler =
    options.context === false
      ? undefined
      : (options.context ??
        new ContextCompiler({
          model: modelName(model),
          contextLimit: contextLimitOf(model),
          audit,
          database,
        }));
  // The evidence node seals at the end of each run; `run`/`resume` return that bundle.
  const sealedByThread = new Map<string, SealedEvidence>();
  const evidence = {
    audit,
    signers: [signer],
    onSealed: (threadId: string, sealed: SealedEvidence) => sealedByThread.set(threadId, sealed),
    subject: { agentId, agent: options.name },
    // Kept where the approvals service serves it (GET /api/threads/{id}/evidence).
    db: database,
    ...(options.evidenceDir === false
      ? {}
      : { outDir: options.evidenceDir ?? './.veridex/evidence' }),
  };

  const builder = new StateGraph(GovernanceAnnotation)
    .addNode(
      'model',
      agentModelNode({
        model: bound as never,
        instructions: options.instructions,
        audit,
        ...(budget?.maxTokens !== undefined ? { maxTokens: budget.maxTokens } : {}),
      }),
    )
    .addNode('tools', toolNode)
    .addNode('evidence', evidenceNode(evidence))
    .addNode(
      'context',
      compiler
        ? contextNode(compiler, {
            system: options.instructions,
            tools: toolNode.tools as ContextTool[],
          })
        : () => ({}),
    )
    .addEdge(START, 'context')
    .addEdge('context', 'model')
    .addConditionalEdges('model', afterModel, ['tools', 'evidence'])
    .addConditionalEdges(
      'tools',
      (state: GovernanceState) => (budgetExhausted(state.messages) ? 'evidence' : 'context'),
      ['context', 'evidence'],
    )
    .addEdge('evidence', END);
  const checkpointer = options.checkpointer ?? PostgresCheckpointer.fromDatabase(database);
  const graph = builder.compile({ checkpointer, name: options.name });

  /** Runs one graph invocation under the run's budget signal and maps any outcome to a RunResult. */
  async function execute(
    threadId: string,
    runId: string,
    start: (config: {
      configurable: Record<string, string>;
      signal?: AbortSignal;
      durability: 'sync';
    }) => Promise<unknown>,
  ): Promise<RunResult> {
    const signal = runSignal(budget);
    const config = {
      configurable: { thread_id: threadId, run_id: runId },
      ...(signal ? { signal } : {}),
      // Each step's checkpoint is stored before the next step starts, so the model's tool
      // calls are durable before any tool runs: a crash in between cannot make a resumed
      // run ask the model again and act on a different answer.
      durability: 'sync' as const,
    };
    try {
      // Cancelled before it began: start nothing (LangGraph would still write a checkpoint).
      signal?.throwIfAborted();
      const values = (await start(config)) as GovernanceState;
      return await describe(threadId, runId, values);
    } catch (error) {
      // An aborted invoke rejects before LangGraph's last checkpoint write has finished.
      if (checkpointer instanceof PostgresCheckpointer) await checkpointer.settled();
      const reason = signal?.aborted ? signal.reason : error;
      const code = VeridexError.is(reason)
        ? reason.code
        : signal?.aborted
          ? 'cancelled'
          : 'run_failed';
      const message = reason instanceof Error ? reason.message : String(reason);
      await audit.append({
        threadId,
        runId,
        eventId: deriveEventId(
          threadId,
          code === 'budget_exhausted' ? 'budget_exhausted' : 'run_failed',
          runId,
          'invoke',
          message,
        ),
        type: code === 'budget_exhausted' ? 'budget_exhausted' : 'run_failed',
        payload: { code, message },
      });
      const state = (await graph.getState({ configurable: { thread_id: threadId } }))
        .values as GovernanceState;
      return {
        status:
          code === 'budget_exhausted'
            ? 'budget_exhausted'
            : code === 'cancelled'
              ? 'cancelled'
              : 'failed',
        threadId,
        runId,
        output: lastOutput(state),
        pendingApprovals: [],
        refusals: [],
        tokensUsed: tokensUsedThisRun(state.messages ?? []),
        error: { code, message },
      };
    }
  }

  async function describe(
    threadId: string,
    runId: string,
    values: GovernanceState,
  ): Promise<RunResult> {
    const base = {
      threadId,
      runId,
      output: lastOutput(values),
      tokensUsed: tokensUsedThisRun(values.messages),
    };
    const pending = await pendingApprovalInterrupts(graph, threadId);
    if (pending.length > 0) {
      return {
        ...base,
        status: 'suspended',
        pendingApprovals: pending.flatMap((item) => item.value.approvals),
        refusals: pending.flatMap((item) => [
          ...(item.value.refusals ?? []),
          ...item.value.approvals.flatMap((approval) => approval.refusals ?? []),
        ]),
      };
    }
    const sealed =
      sealedByThread.get(threadId) ??
      (await sealThreadEvidence(threadId, { ...evidence, completeRun: false }));
    sealedByThread.delete(threadId);
    return {
      ...base,
      status:
        values.budgetExhausted || budgetExhausted(values.messages)
          ? 'budget_exhausted'
          : 'completed',
      pendingApprovals: [],
      refusals: [],
      evidenceBundle: sealed.bundle,
      ...(sealed.path ? { evidencePath: sealed.path } : {}),
    };
  }

  return {
    graph,
    audit,
    approvals,
    database,
    async run(prompt, runOptions = {}) {
      const threadId = runOptions.threadId ?? `thread-${randomUUID()}`;
      const runId = `run-${randomUUID()}`;
      await audit.append({
        threadId,
        runId,
        eventId: deriveEventId(threadId, 'run_started', runId),
        type: 'run_started',
        payload: { agent: options.name, prompt },
      });
      const input = { messages: [new HumanMessage(prompt)], runId, budgetExhausted: false };
      return execute(threadId, runId, (config) => graph.invoke(input, config));
    },
    async resume(threadId, decisions) {
      const state = (await graph.getState({ configurable: { thread_id: threadId } }))
        .values as GovernanceState;
      const runId = state.runId || threadId;
      return execute(threadId, runId, (config) => resumeThread(graph, threadId, decisions, config));
    },
    async getEvidence(threadId) {
      // Recorded and linked like the evidence node's bundles, so both verify as one history.
      return (await sealAuditThread(audit, { threadId, subject: evidence.subject }, [signer]))
        .bundle;
    },
    async close() {
      if (ownsDatabase) await database.close();
    },
  };
}

function afterModel(state: GovernanceState): 'tools' | 'evidence' {
  if (state.budgetExhausted) return 'evidence';
  const last = state.messages.at(-1);
  return last && isAIMessage(last) && (last as AIMessage).tool_calls?.length ? 'tools' : 'evidence';
}

function lastOutput(state: Partial<GovernanceState>): string {
  const last = (state.messages ?? []).findLast((message) => isAIMessage(message));
  if (!last) return '';
  return typeof last.content === 'string' ? last.content : JSON.stringify(last.content);
}

function modelName(model: BaseChatModel): string {
  const candidate =
    (model as { model?: unknown; modelName?: unknown }).model ??
    (model as { modelName?: unknown }).modelName;
  return typeof candidate === 'string' ? candidate : 'gpt-4o';
}

function contextLimitOf(model: BaseChatModel): number | undefined {
  // Models without a name (test doubles) get gpt-4o's window; named ones use the table.
  return typeof (
    (model as { model?: unknown }).model ?? (model as { modelName?: unknown }).modelName
  ) === 'string'
    ? undefined
    : 128_000;
}

async function defaultModel(): Promise<BaseChatModel> {
  if (!process.env.OPENAI_API_KEY) {
    throw new VeridexError(
      'config_invalid',
      'createGovernedAgent needs a model: pass `model` (e.g. scriptedModel([...]) from @veridex/langgraph/testing for offline runs) or set OPENAI_API_KEY to use ChatOpenAI.',
    );
  }
  const { ChatOpenAI } = await import('@langchain/openai');
  return new ChatOpenAI({ model: process.env.OPENAI_MODEL ?? 'gpt-4o-mini' });
}
