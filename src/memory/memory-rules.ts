import type { Database } from '../db/index.js';
import { VeridexError } from '../errors/index.js';
import { type MemoryWriteProposal, type PolicyRule, policyRule } from '../policy/index.js';
import { credentialKindsIn, MAX_CHECKED_FIELDS } from './credential-views.js';
import { LOCK_QUOTA, QUOTA_COUNT, QUOTA_HAS, QUOTA_RESERVE } from './sql.js';

/** Priority of the content rules: they run together, and the most restrictive verdict wins. */
const CONTENT_PRIORITY = 100;
/**
 * The quota runs below every other memory rule, so a write another rule denies or escalates
 * never consumes quota (the engine stops at the highest priority that has an opinion).
 */
const QUOTA_PRIORITY = 1;

const memoryWrite = (proposal: unknown) => proposal as MemoryWriteProposal;

/**
 * Built-in policy rules for `memory_write` proposals. Register them on the `PolicyEngine` the
 * `MemoryManager` uses. Denials carry code `memory_write_denied`.
 *
 * @example
 * const policy = new PolicyEngine({ audit, rules: [
 *   memoryRules.denySecrets(), memoryRules.toolSourcedWrites('escalate'),
 *   memoryRules.minConfidence(0.5), memoryRules.writeQuota({ perThread: 50, db }),
 * ] });
 */
export const memoryRules = {
  /**
   * Denies writes that carry something shaped like a credential (API keys, tokens, webhooks,
   * connection strings, private keys, passwords) in any field — content, subject, object, key,
   * tags, value — also split across fields or tags, broken by invisible characters or spaced
   * out (see {@link credentialKindsIn}; the detector is the audit log's redactor). A write
   * with more than 4,096 text fields is denied unchecked. `MemoryManager` applies it by default.
   */
  denySecrets(): PolicyRule {
    return policyRule({
      id: 'memory.deny_secrets',
      name: 'No credentials in memory',
      priority: CONTENT_PRIORITY,
      appliesTo: ['memory_write'],
      evaluate: ({ proposal }) => {
        const write = memoryWrite(proposal);
        const texts = write.texts ?? [
          write.content,
          ...(write.key ? [write.key] : []),
          ...write.tags,
        ];
        if (texts.length > MAX_CHECKED_FIELDS) {
          return {
            verdict: 'deny',
            code: 'memory_write_denied',
            reason: `the write has ${texts.length} text fields; at most ${MAX_CHECKED_FIELDS} can be checked for credentials — store fewer, larger fields`,
          };
        }
        const kinds = credentialKindsIn(texts);
        if (kinds.length === 0) return undefined;
        return {
          verdict: 'deny',
          code: 'memory_write_denied',
          reason: `content looks like a credential (${kinds.join(', ')}); secrets belong in a SecretsProvider, not in memory`,
        };
      },
    });
  },

  /**
   * Denies or escalates writes whose source is tool output: text a tool fetched is the
   * indirect-injection path to memory poisoning.
   */
  toolSourcedWrites(verdict: 'deny' | 'escalate' = 'deny'): PolicyRule {
    return policyRule({
      id: 'memory.tool_sourced_writes',
      name: `Tool-sourced memory writes: ${verdict}`,
      priority: CONTENT_PRIORITY,
      appliesTo: ['memory_write'],
      evaluate: ({ proposal }) => {
        if (memoryWrite(proposal).source !== 'tool') return undefined;
        const reason = 'the write comes from tool output (possible memory poisoning)';
        return verdict === 'deny'
          ? { verdict: 'deny', code: 'memory_write_denied', reason }
          : { verdict: 'escalate', route: 'human_required', reason };
      },
    });
  },

  /**
   * Denies writes below a confidence.
   * @throws VeridexError `config_invalid` for a minimum outside 0–1.
   */
  minConfidence(minimum: number): PolicyRule {
    if (!(minimum >= 0 && minimum <= 1)) {
      throw new VeridexError(
        'config_invalid',
        `minConfidence must be from 0 to 1; got ${minimum}.`,
      );
    }
    return policyRule({
      id: 'memory.min_confidence',
      name: `Memory confidence ≥ ${minimum}`,
      priority: CONTENT_PRIORITY,
      appliesTo: ['memory_write'],
      evaluate: ({ proposal }) => {
        const { confidence } = memoryWrite(proposal);
        if (confidence >= minimum) return undefined;
        return {
          verdict: 'deny',
          code: 'memory_write_denied',
          reason: `confidence ${confidence} is below the minimum ${minimum}`,
        };
      },
    });
  },

  /**
   * At most `perThread` writes per thread, counted in the database (so the count survives
   * restarts and is shared by processes). Each allowed write id reserves one unit; a replayed
   * proposal re-uses its reservation instead of consuming another.
   * @throws VeridexError `config_invalid` for a non-positive or non-integer quota.
   */
  writeQuota(options: { perThread: number; db: Database }): PolicyRule {
    const { perThread, db } = options;
    if (!Number.isInteger(perThread) || perThread < 1) {
      throw new VeridexError(
        'config_invalid',
        `writeQuota perThread must be a positive integer; got ${perThread}.`,
      );
    }
    return policyRule({
      id: 'memory.write_quota',
      name: `At most ${perThread} memory writes per thread`,
      priority: QUOTA_PRIORITY,
      appliesTo: ['memory_write'],
      evaluate: async ({ proposal, now }) => {
        const { threadId, writeId } = memoryWrite(proposal);
        const allowed = await db.transaction(async (tx) => {
          await tx.query(LOCK_QUOTA, [threadId]);
          if ((await tx.query(QUOTA_HAS, [threadId, writeId])).rows.length > 0) return true;
          const { rows } = await tx.query<{ count: number }>(QUOTA_COUNT, [threadId]);
          if ((rows[0]?.count ?? 0) >= perThread) return false;
          await tx.query(QUOTA_RESERVE, [threadId, writeId, now]);
          return true;
        });
        if (allowed) return undefined;
        return {
          verdict: 'deny',
          code: 'memory_write_denied',
          reason: `thread "${threadId}" has used its quota of ${perThread} memory writes`,
        };
      },
    });
  },
};
