import type { z } from 'zod';

/**
 * How dangerous a tool is; drives policy defaults, audit visibility and sandbox defaults.
 * - `read`: no side effects (allowed by default)
 * - `write`: changes state you own (allowed and logged by default)
 * - `network`: talks to other hosts (needs a network allowlist)
 * - `financial`: moves money (one human approval by default)
 * - `privileged`: credentials, users, infrastructure (two approvals by default)
 */
export type SafetyClass = 'read' | 'write' | 'network' | 'financial' | 'privileged';

/** The safety classes, least to most dangerous. */
export const SAFETY_CLASSES: readonly SafetyClass[] = [
  'read',
  'write',
  'network',
  'financial',
  'privileged',
];

/** How an escalated call is approved. See `@veridex/langgraph/approvals`. */
export type ApprovalRoute = 'auto' | 'human_required' | 'dual_approval' | 'policy_pack';

/** A tool's own approval requirement (a policy rule may override it). */
export interface ToolApproval {
  route: ApprovalRoute;
  /** How long a request waits for a decision. */
  timeoutMs?: number;
  /** Name of the policy pack (escalation chain) when `route` is `policy_pack`. */
  pack?: string;
}

/** Retry policy: only errors marked retryable are retried, always with the same idempotency key. */
export interface ToolRetry {
  attempts: number;
  backoffMs: number;
}

/** Where a tool comes from. Imported tools (LangChain, OpenAI, MCP, OpenAPI) are untrusted metadata. */
export type ToolTrust = 'local' | 'imported';

/** Sandbox requirements declared by a tool. */
export interface ToolSandboxSpec {
  /** Hosts the tool may reach: exact (`api.example.com`) or wildcard (`*.example.com`). */
  networkAllowlist?: readonly string[];
  /** Environment variables a process sandbox passes through. */
  envAllowlist?: readonly string[];
  /**
   * For the process sandboxes (`LocalProcessSandbox`, `IsolatedProcessSandbox`): the module
   * that exports this tool (usually `import.meta.url`), so the child process can import it.
   * Tools without it cannot run in a child process.
   */
  module?: string;
  /** Export name of the tool in `module` (default: whichever export holds the tool of this name). */
  exportName?: string;
}

/**
 * Hints in the spirit of MCP tool annotations. They inform policy and UIs but never lower a
 * tool's safety class.
 */
export interface ToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
  [key: string]: unknown;
}

/** A secret handed to a tool: prints as `[REDACTED:NAME]`; `reveal()` only inside `execute`. */
export interface SecretRef {
  readonly name: string;
  /** The secret value. @throws VeridexError `secret_access_denied` outside the tool's `execute`. */
  reveal(): string;
  toString(): string;
  toJSON(): string;
}

/** The secrets a tool may use during one execution. */
export interface ToolSecrets {
  /** @throws VeridexError `secret_not_found` for a secret the provider does not allow. */
  get(name: string): SecretRef;
}

/** An allowlisted HTTP client injected by the sandbox (a `fetch` subset). */
export interface HttpClient {
  fetch(url: string | URL, init?: RequestInit): Promise<Response>;
}

/** A file system view jailed to the sandbox root (see `createJailedFs`: no symlink is followed). */
export interface JailedFs {
  readonly root: string;
  readFile(path: string): Promise<Buffer>;
  readText(path: string): Promise<string>;
  writeFile(path: string, data: string | Uint8Array): Promise<void>;
  list(path?: string): Promise<string[]>;
  remove(path: string): Promise<void>;
}

/** Read-only facts about the call being executed. */
export interface ToolCallContext {
  threadId: string;
  toolCallId: string;
  runId: string;
  /** Hash of the approved proposal envelope (see approvals). */
  proposalHash: string;
  /** Identities of approvers, when the call was approved by humans. */
  approvedBy: readonly string[];
  /** Extra request-scoped data from the graph's `configurable` (user id, tenant, …). */
  metadata: Readonly<Record<string, unknown>>;
}

/**
 * The LangGraph side of a call, as LangGraph's `ToolNode` hands it to a tool (its second
 * argument): the graph state, the tool call's id, the run's config, and the store, writer and
 * context of the run. Given to tools that execute in this process (`DenyAllSandbox`,
 * `InProcessSandbox`); a child-process sandbox cannot carry it, and its tools get none.
 */
export interface ToolRuntime {
  /** The model's tool call id. */
  toolCallId: string;
  /** The graph state the tool node was invoked with (or its input list). */
  state?: unknown;
  /** The node's `RunnableConfig` (configurable, callbacks, signal, …). */
  config?: Record<string, unknown>;
  /** `config.context` of the run (LangGraph's runtime context). */
  context?: unknown;
  /** The graph's store, or `null`. */
  store?: unknown;
  /** The custom stream writer, or `null`. */
  writer?: unknown;
  /** Further fields the host passes (LangChain `createAgent` adds its own). */
  [key: string]: unknown;
}

/** What `execute` receives. */
export interface ToolExecuteArgs<Input> {
  /** Arguments, already validated against the tool's input schema. */
  input: Input;
  secrets: ToolSecrets;
  /** Deterministic key (thread + tool call + proposal hash); pass it to external APIs. */
  idempotencyKey: string;
  /** Aborted on timeout, run cancellation or budget exhaustion. */
  signal: AbortSignal;
  context: ToolCallContext;
  /** Allowlisted HTTP; any other network access is a sandbox violation. */
  http: HttpClient;
  /** Jailed file system. */
  fs: JailedFs;
  /** The LangGraph runtime of the call, when it runs in this process inside a graph. */
  runtime?: ToolRuntime;
}

/** A tool may separate what the model sees (`llmOutput`) from data kept for the app (`artifact`). */
export interface ToolOutputWithArtifact<Output> {
  llmOutput: Output;
  artifact?: unknown;
}

/** What a tool's `recover` receives: the call whose earlier execution was interrupted. */
export interface ToolRecoverArgs<Input> {
  /** Arguments, already validated against the tool's input schema. */
  input: Input;
  /** The in-doubt key (the same key the interrupted execution received). */
  idempotencyKey: string;
  context: ToolCallContext;
}

/**
 * What `recover` found out about an interrupted execution:
 * - `executed`: it happened; `output` is stored as the call's result (validated and sanitised
 *   like a fresh result) and returned without executing again;
 * - `not_executed`: it did not happen; the key is released and the call executes normally;
 * - `unknown`: nobody can tell; the key stays in doubt and the call fails with `error`
 *   (default `idempotency_in_doubt`) until an operator resolves it.
 */
export type ToolRecovery<Output> =
  | { status: 'executed'; output: Output | ToolOutputWithArtifact<Output> }
  | { status: 'not_executed' }
  | { status: 'unknown'; error?: Error };

/** The options of `tool()`. */
export interface ToolDefinition<Input extends z.ZodType, Output extends z.ZodType> {
  name: string;
  description: string;
  safetyClass: SafetyClass;
  input: Input;
  output: Output;
  /** `required`: the tool gets an idempotency key and runs at most once per key (default `optional`). */
  idempotency?: 'optional' | 'required';
  approval?: ToolApproval;
  retry?: ToolRetry;
  /** Wall-clock limit per attempt; on expiry the signal aborts and the call fails with `tool_timeout`. */
  timeoutMs?: number;
  sandbox?: ToolSandboxSpec;
  annotations?: ToolAnnotations;
  /** Names of secrets the tool may `get` (anything else is `secret_not_found`). */
  secrets?: readonly string[];
  execute(
    args: ToolExecuteArgs<z.output<Input>>,
  ): Promise<z.input<Output> | ToolOutputWithArtifact<z.input<Output>>>;
  /**
   * Called by `runTool` when the call's idempotency key is `in_doubt` (an earlier execution
   * was interrupted while executing: crash, timeout, cancellation) to find out what happened,
   * e.g. by asking the payment rail for the key. Without it an in-doubt call fails with
   * `idempotency_in_doubt` until an operator resolves the key. Runs outside the sandbox.
   */
  recover?(args: ToolRecoverArgs<z.output<Input>>): Promise<ToolRecovery<z.input<Output>>>;
}

/**
 * An imported tool held for review: its metadata carried tool-poisoning instructions (removed
 * before the model sees them). It cannot be called (`tool_review_required`) until a reviewer
 * releases it by name (`acceptReview: [name]` on the import), which records the review beside
 * its pin; re-pinning a changed tool (`accept`) does not release it.
 */
export interface ToolReview {
  readonly state: 'review_required';
  /** Kinds of what was found (`hidden_tag`, `secret_access`, …), never the text. */
  readonly reasons: readonly string[];
}

/** A governed tool: a definition plus its pinned schema hash and JSON Schemas. Immutable. */
export interface GovernedTool<
  Input extends z.ZodType = z.ZodType,
  Output extends z.ZodType = z.ZodType,
> extends Readonly<Omit<ToolDefinition<Input, Output>, 'idempotency'>> {
  readonly kind: 'veridex.tool';
  readonly idempotency: 'optional' | 'required';
  readonly trust: ToolTrust;
  /** Present on an imported tool held for review: every call is refused until accepted. */
  readonly review?: ToolReview;
  /** SHA-256 of the canonical JSON of name, description, JSON Schemas, safety class and annotations. */
  readonly schemaHash: string;
  readonly jsonSchema: {
    readonly input: Record<string, unknown>;
    readonly output: Record<string, unknown>;
  };
}

/** Any governed tool, whatever its schemas. */
export type AnyGovernedTool = GovernedTool<z.ZodType, z.ZodType>;
