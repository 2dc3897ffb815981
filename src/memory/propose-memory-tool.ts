import { z } from 'zod';
import { canonicalJson, sha256Hex } from '../audit/index.js';
import { VeridexError } from '../errors/index.js';
import { tool } from '../tools/index.js';
import type { ToolCallContext } from '../tools/types.js';
import { currentConversation } from './current-conversation.js';
import type { MemoryManager } from './memory-manager.js';
import type { StoredTier } from './types.js';

/** Options for {@link proposeMemoryTool}. */
export interface ProposeMemoryToolOptions {
  /** Namespace of the writes, e.g. `(context) => ['users', String(context.metadata.user_id)]`. */
  namespace?: readonly string[] | ((context: ToolCallContext) => readonly string[]);
  /**
   * Tiers the model may write. Default `semantic` and `episodic`: letting a model write
   * `procedural` memory lets it rewrite its own standing instructions.
   */
  tiers?: readonly StoredTier[];
  /** Tool name. Default `propose_memory`. */
  name?: string;
}

const Output = z.object({
  status: z.enum(['written', 'rejected_by_conflict', 'duplicate', 'escalated']),
  recordId: z.string().optional(),
  version: z.number().int().optional(),
  message: z.string(),
});

/**
 * `propose_memory` as a governed tool (safety class `write`): the model proposes something to
 * remember; the write becomes a `memory_write` proposal the manager's policy decides before
 * anything is stored. A denial fails the call with `memory_write_denied` (the model reads the
 * rule and reason); an escalation stores nothing and says so. The write id is derived from the
 * thread and content, so a re-executed call never writes twice. The source the model claims
 * is not trusted: inside a graph it is derived from the conversation (`deriveProvenance`):
 * text from tool output is `tool`-sourced (escalated by the manager's default guard), and
 * `user` needs the user's own words; trust is never above `medium`.
 *
 * @example
 * const tools = governedToolNode({ tools: [proposeMemoryTool(memory)], policy, audit });
 */
export function proposeMemoryTool(manager: MemoryManager, options: ProposeMemoryToolOptions = {}) {
  const tiers = options.tiers ?? ['semantic', 'episodic'];
  const Input = z
    .object({
      content: z.string().min(1).max(2_000).describe('One self-contained statement to remember.'),
      tier: z
        .enum(tiers as [StoredTier, ...StoredTier[]])
        .optional()
        .describe('semantic: a stable fact or preference; episodic: something that happened.'),
      subject: z.string().max(200).optional().describe('Who or what the fact is about.'),
      predicate: z
        .string()
        .max(200)
        .optional()
        .describe('The attribute, e.g. "prefers", "lives in".'),
      object: z.string().max(500).optional().describe('The value.'),
      confidence: z.number().min(0).max(1).optional().describe('How sure you are, 0 to 1.'),
      tags: z.array(z.string().min(1).max(50)).max(10).optional(),
      source: z
        .enum(['user', 'model', 'tool'])
        .optional()
        .describe('Where it comes from: the user said it, you inferred it, or a tool returned it.'),
    })
    .strict();
  return tool({
    name: options.name ?? 'propose_memory',
    description:
      'Propose a fact, preference or event to remember in later conversations. A policy reviews every proposal before it is stored; the result says whether it was.',
    safetyClass: 'write',
    input: Input,
    output: Output,
    async execute({ input, context }) {
      const namespace =
        typeof options.namespace === 'function' ? options.namespace(context) : options.namespace;
      // The source is derived from the conversation the call came from (graph state), never
      // taken from the model: `source: 'user'` for injected tool text is recorded as `tool`.
      // Where no conversation is visible (runTool, MCP) a claimed `user` counts as `model`.
      const conversation = currentConversation();
      const declared =
        input.source === 'tool'
          ? 'tool'
          : input.source === 'user' && conversation
            ? 'user'
            : 'model';
      const outcome = await manager.propose(
        {
          ...input,
          tier: input.tier ?? 'semantic',
          source: declared,
          trust: declared === 'tool' ? 'low' : 'medium',
          ...(namespace ? { namespace } : {}),
          // Not keyed by the tool call: proposing the same memory again in this thread (say,
          // after a human approved an escalated proposal) is the same write, stored once.
          writeId: `mt_${sha256Hex(canonicalJson([context.threadId, input.tier ?? 'semantic', input.content])).slice(0, 32)}`,
        },
        {
          threadId: context.threadId,
          runId: context.runId,
          proposer: 'agent',
          ...(conversation ? { conversation } : {}),
        },
      );
      if (outcome.status === 'denied') {
        throw new VeridexError(
          'memory_write_denied',
          `Not stored: rule "${outcome.ruleId}" denied it (${outcome.reason}).`,
          { details: { ruleId: outcome.ruleId } },
        );
      }
      if (outcome.status === 'escalated') {
        return {
          status: 'escalated' as const,
          message: outcome.approvalId
            ? `Not stored yet: rule "${outcome.decision.ruleId}" requires a human review (approval ${outcome.approvalId}). Propose the same memory again once it is approved.`
            : `Not stored: rule "${outcome.decision.ruleId}" requires a human review.`,
        };
      }
      const messages = {
        written: 'Stored.',
        rejected_by_conflict: `Kept as history only: it conflicts with a more reliable memory (${outcome.status === 'rejected_by_conflict' ? outcome.winner.content : ''}).`,
        duplicate: 'Already known.',
      };
      return {
        status: outcome.status,
        recordId: outcome.record.id,
        version: outcome.record.version,
        message: messages[outcome.status],
      };
    },
  });
}
