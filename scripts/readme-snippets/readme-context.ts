// What README.md's prose takes as given: the values a code block uses without creating them (a
// database opened in an earlier block, the reader's own model, an approver's key). A block
// imports the ones it needs in its `<!-- snippet: -->` comment:
//
//   <!-- snippet: import { audit, db } from './readme-context.js'; -->
//
// Declarations only: nothing here runs. Library objects carry the library's own types, so a
// block that misuses one fails to type-check; values the reader supplies (a payment service, a
// findings schema) get the narrowest type the block needs.
import type { ToolCall } from '@langchain/core/messages/tool';
import type { StructuredTool } from '@langchain/core/tools';
import type { CompiledStateGraph, MessagesAnnotation, StateGraph } from '@langchain/langgraph';
import type { ChatOpenAI } from '@langchain/openai';
import type { ApprovalManager } from '@veridex/langgraph/approvals';
import type { AuditLog, Ed25519Signer, EvidenceBundle } from '@veridex/langgraph/audit';
import type { PostgresCheckpointer } from '@veridex/langgraph/checkpointer';
import type { ContextLedger, EnvelopeKey } from '@veridex/langgraph/context';
import type { Database } from '@veridex/langgraph/db';
import type { BranchInput, HandoffAnnotation } from '@veridex/langgraph/nodes';
import type { PolicyEngine } from '@veridex/langgraph/policy';
import type { Sandbox } from '@veridex/langgraph/sandbox';
import type { GovernedTool, ToolRegistry } from '@veridex/langgraph/tools';
import type {
  BalanceProvider,
  SanctionsScreener,
  TransferExecutor,
  TreasuryKit,
} from '@veridex/langgraph/treasury';
import type { z } from 'zod';

/** The database every block shares (`createDatabase()` then `migrate(db)`). */
export declare const db: Database;
/** The audit log over {@link db}. */
export declare const audit: AuditLog;
/** The approval manager over {@link db}. */
export declare const approvals: ApprovalManager;
/** A policy engine, as built in the Policy section. */
export declare const policy: PolicyEngine;
/** The reader's chat model. */
export declare const model: ChatOpenAI;
/** The agent's evidence signer (`loadOrCreateSigner().signer`). */
export declare const signer: Ed25519Signer;
/** The checkpointer of the Checkpointer section. */
export declare const checkpointer: PostgresCheckpointer;
/** A graph's config naming its thread. */
export declare const config: { configurable: { thread_id: string } };
/** A thread id. */
export declare const threadId: string;

/** The governed refund tool of "Add governance to your graph". */
export declare const refund: GovernedTool;
/** A plain LangChain tool the agent already has. */
export declare const lookupOrder: StructuredTool;
/** Approvers' Ed25519 keys (`veridex approvers keygen`). */
export declare const leadKey: Uint8Array;
export declare const aliceKey: Uint8Array;
export declare const bobKey: Uint8Array;
export declare const alicePrivateKey: Uint8Array;
export declare const alicePublicKey: Uint8Array;

/** The treasury kit of the Treasury kit section, and what the reader plugs into it. */
export declare const kit: TreasuryKit;
export declare const provider: BalanceProvider;
export declare const executor: TransferExecutor;
export declare const sanctions: SanctionsScreener;

/** A graph under construction (`new StateGraph(MessagesAnnotation)`). */
export declare const graphBuilder: StateGraph<typeof MessagesAnnotation>;
/** A compiled messages graph with a checkpointer. */
export declare const compiledGraph: CompiledStateGraph<
  typeof MessagesAnnotation.State,
  typeof MessagesAnnotation.Update
>;
/** The input of one invocation of {@link compiledGraph}. */
export declare const graphInput: typeof MessagesAnnotation.Update;

/** A graph whose state has the hand-off channels (`Annotation.Root({ ...HandoffAnnotation.spec })`). */
export declare const handoffGraph: StateGraph<typeof HandoffAnnotation>;
/** The schema of the findings agents hand to each other. */
export declare const Findings: z.ZodObject<{
  summary: z.ZodString;
  confidence_score: z.ZodNumber;
}>;
/** The shared hand-off signing key and the envelope ledger. */
export declare const handoffKey: EnvelopeKey;
export declare const ledger: ContextLedger;
/** The node each fork-join branch runs: it reads its branch's snapshot and adds its result. */
export declare function analyst(
  input: BranchInput<z.infer<typeof Findings>>,
): Promise<typeof HandoffAnnotation.Update>;

/** A tool call the model made, the tool registry and the sandbox of the Governed tools section. */
export declare const call: ToolCall;
export declare const registry: ToolRegistry;
export declare const sandbox: Sandbox;

/** Two evidence bundles of the same thread, the newer sealed after the older. */
export declare const olderBundle: EvidenceBundle;
export declare const newerBundle: EvidenceBundle;

/** The checkpoint head hash recorded earlier (in an audit event or an evidence bundle). */
export declare const expectedHeadHash: string;
/** A PostgreSQL connection URL, and a signal that aborts a run. */
export declare const url: string;
export declare const signal: AbortSignal;
/** The agent's tools (LangChain tools). */
export declare const tools: StructuredTool[];
