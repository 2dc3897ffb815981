import type { AnyGovernedTool, ApprovalRoute, SafetyClass, ToolTrust } from '../tools/types.js';

/** What every proposal carries. */
interface ProposalBase {
  threadId: string;
  runId: string;
  /** Who proposes: the agent id (an approver equal to it never counts). */
  proposer: string;
  /** Envelope hash: SHA-256 of the canonical JSON of the proposal's identifying fields. */
  hash: string;
}

/** A tool call the model wants to make. */
export interface ToolProposal extends ProposalBase {
  kind: 'tool';
  toolCallId: string;
  toolName: string;
  schemaHash: string;
  safetyClass: SafetyClass;
  trust: ToolTrust;
  arguments: Record<string, unknown>;
  /** The contract, for rules that read its approval, sandbox or annotations. */
  tool: AnyGovernedTool;
}

/** Where a memory write comes from; tool output is the classic memory-poisoning path. */
export type MemorySource = 'user' | 'model' | 'tool' | 'import' | 'system';

/** A write to long-term memory. */
export interface MemoryWriteProposal extends ProposalBase {
  kind: 'memory_write';
  /** Deterministic id of this write (so a re-run node proposes the same write). */
  writeId: string;
  tier: 'episodic' | 'semantic' | 'procedural';
  namespace: readonly string[];
  content: string;
  confidence: number;
  source: MemorySource;
  tags: readonly string[];
  /** The record's explicit key (procedure name, store key), when it has one. */
  key?: string;
  /**
   * Every text the write would store, field by field: content, subject, predicate, object,
   * key, each tag and each string in its value. Content rules (secrets) read these, so a
   * token split across fields or hidden in a tag is still one write's text.
   */
  texts?: readonly string[];
}

/** Context handed from one agent (or subgraph) to another. */
export interface HandoffProposal extends ProposalBase {
  kind: 'handoff';
  from: string;
  to: string;
  /** Content hash of the hand-off payload. */
  payloadHash: string;
  tokenCount: number;
}

/** Anything the policy engine decides on. */
export type Proposal = ToolProposal | MemoryWriteProposal | HandoffProposal;

/** The three verdicts, most restrictive last. */
export type Verdict = 'allow' | 'escalate' | 'deny';

/** What one rule says about a proposal. Returning `undefined` means "no opinion". */
export type RuleResult =
  | { verdict: 'allow'; reason?: string }
  | { verdict: 'deny'; reason: string; code?: string }
  | {
      verdict: 'escalate';
      route: ApprovalRoute;
      reason: string;
      /** Policy pack name when `route` is `policy_pack`. */
      pack?: string;
      timeoutMs?: number;
    };

/** The engine's final decision, naming the rule that made it. */
export type PolicyDecision = RuleResult & {
  ruleId: string;
  ruleName: string;
  /** Every rule that had an opinion, in evaluation order (for the audit log). */
  evaluations: ReadonlyArray<{ ruleId: string; verdict: Verdict; reason?: string }>;
};

/** Anything that can decide on proposals: the `PolicyEngine`, or a test double. */
export interface ProposalEvaluator {
  evaluate(proposal: Proposal): Promise<PolicyDecision>;
}

/** What a rule sees. */
export interface PolicyContext<P extends Proposal = Proposal> {
  proposal: P;
  /** Evaluation time (injectable for tests). */
  now: Date;
}

/**
 * One policy rule. Rules run in descending `priority`; among the rules with an opinion at the
 * highest priority, the most restrictive verdict wins (deny > escalate > allow). A rule that
 * throws denies (fail closed).
 */
export interface PolicyRule {
  /** Stable id, named in decisions and audit events (e.g. `treasury.dual_approval_threshold`). */
  id: string;
  name: string;
  /** Higher runs first and outranks lower. Built-in safety-class defaults use 0. */
  priority: number;
  /** Proposal kinds this rule looks at (default: all). */
  appliesTo?: ReadonlyArray<Proposal['kind']>;
  /**
   * The tools a rule that only protects by naming them (`requireApproval`, `denyTools`) names:
   * each must be a tool of the node or agent it governs, else `config_invalid` — a misspelt
   * name would leave the tool it meant unprotected. `unknownToolsAllowed` (a policy shared by
   * agents with different tools) waives the check by name.
   */
  protects?: { tools: readonly string[]; unknownToolsAllowed?: boolean };
  evaluate(context: PolicyContext): RuleResult | undefined | Promise<RuleResult | undefined>;
}
