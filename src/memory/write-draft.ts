import { canonicalJson, sha256Hex } from '../audit/index.js';
import { VeridexError } from '../errors/index.js';
import {
  buildMemoryWriteProposal,
  type MemorySource,
  type MemoryWriteProposal,
} from '../policy/index.js';
import { stringsOf } from './credential-views.js';
import type {
  MemoryRecord,
  MemoryWriteContext,
  MemoryWriteInput,
  StoredTier,
  TrustLevel,
} from './types.js';

/** A validated write: the record it would store (version and key still provisional) and its proposal. */
export interface WriteDraft {
  record: MemoryRecord;
  proposal: MemoryWriteProposal;
  /** True when the key was given or derived (procedure name, store key, subject|predicate). */
  explicitKey: boolean;
  /** Same key → the newer version replaces the old without a conflict decision (procedures, store items). */
  replaces: boolean;
  derivedFrom: readonly string[];
}

/** Defaults the manager fills in. */
export interface DraftDefaults {
  namespace: readonly string[];
  confidence: number;
  proposer: string;
  now: Date;
}

/** How far each source is trusted when a write names no trust level. */
export const TRUST_BY_SOURCE: Readonly<Record<MemorySource, TrustLevel>> = {
  system: 'high',
  user: 'high',
  model: 'medium',
  import: 'medium',
  tool: 'low',
};
const TIERS: readonly StoredTier[] = ['episodic', 'semantic', 'procedural'];

/**
 * Validates a write input and builds its draft record and `memory_write` proposal. The write
 * id is derived from the thread, run, turn and content fields unless given, so a LangGraph
 * node that re-runs after a resume proposes exactly the same write.
 *
 * @throws VeridexError `input_invalid` for empty content, a confidence outside 0–1, an unknown
 *   tier or source, or a malformed namespace.
 */
export function buildWriteDraft(
  input: MemoryWriteInput,
  context: MemoryWriteContext,
  defaults: DraftDefaults,
  options: { replaces?: boolean } = {},
): WriteDraft {
  const tier = input.tier ?? 'semantic';
  if (!TIERS.includes(tier)) invalid(`tier must be one of ${TIERS.join(', ')}; got "${tier}".`);
  const namespace = [...(input.namespace ?? defaults.namespace)];
  assertNamespace(namespace);
  const content = typeof input.content === 'string' ? input.content.trim() : '';
  if (content.length === 0) invalid('content must be a non-empty string.');
  const confidence = input.confidence ?? defaults.confidence;
  if (typeof confidence !== 'number' || !(confidence >= 0 && confidence <= 1)) {
    invalid(`confidence must be a number from 0 to 1; got ${String(confidence)}.`);
  }
  const texts = [
    content,
    input.subject,
    input.predicate,
    input.object,
    input.key,
    ...(input.tags ?? []),
  ];
  if (texts.some((text) => typeof text === 'string' && text.includes('\u0000'))) {
    invalid('text fields must not contain NUL characters (PostgreSQL cannot store them).');
  }
  if (input.value !== undefined && canonicalJson(input.value).includes('\\u0000')) {
    invalid('value must not contain NUL characters (PostgreSQL cannot store them).');
  }
  const source = input.source ?? 'model';
  if (!(source in TRUST_BY_SOURCE)) invalid(`source "${source}" is not a memory source.`);
  const threadId = context.threadId ?? 'default';
  const runId = context.runId ?? threadId;
  const turn = context.turn ?? 0;
  const derivedKey =
    input.key ??
    (input.subject && input.predicate
      ? `${normalizeTerm(input.subject)}|${normalizeTerm(input.predicate)}`
      : undefined);
  const fields = {
    tier,
    namespace,
    key: derivedKey ?? null,
    content,
    subject: input.subject ?? null,
    predicate: input.predicate ?? null,
    object: input.object ?? null,
    value: input.value ?? null,
    source,
  };
  const writeId =
    input.writeId ??
    `mw_${sha256Hex(canonicalJson({ threadId, runId, turn, ...fields })).slice(0, 32)}`;
  const id = `mem_${sha256Hex(writeId).slice(0, 32)}`;
  const observedAt = (input.observedAt ?? defaults.now).toISOString();
  const now = defaults.now.toISOString();
  const record: MemoryRecord = {
    id,
    tier,
    namespace,
    key: derivedKey ?? id,
    version: 1,
    content,
    confidence,
    tags: [...(input.tags ?? [])],
    provenance: {
      threadId,
      runId,
      turn,
      timestamp: observedAt,
      source,
      trust: input.trust ?? TRUST_BY_SOURCE[source],
      writeId,
    },
    validFrom: observedAt,
    createdAt: now,
    storedAt: now,
    strength: 1,
    reinforcedAt: observedAt,
    recallCount: 0,
    ...(input.subject ? { subject: input.subject } : {}),
    ...(input.predicate ? { predicate: input.predicate } : {}),
    ...(input.object ? { object: input.object } : {}),
    ...(input.value ? { value: input.value } : {}),
  };
  const proposal = buildMemoryWriteProposal({
    threadId,
    runId,
    proposer: context.proposer ?? defaults.proposer,
    writeId,
    tier,
    namespace,
    // Everything the write would store, so content rules (e.g. secrets) see all of it.
    content: [
      content,
      input.subject,
      input.predicate,
      input.object,
      input.value && canonicalJson(input.value),
    ]
      .filter((part): part is string => typeof part === 'string' && part.length > 0)
      .join('\n'),
    confidence,
    source,
    tags: record.tags,
    ...(derivedKey === undefined ? {} : { key: derivedKey }),
    texts: [
      content,
      ...[input.subject, input.predicate, input.object, input.key].filter(
        (part): part is string => typeof part === 'string' && part.length > 0,
      ),
      ...record.tags,
      ...(input.value ? stringsOf(input.value) : []),
    ],
  });
  return {
    record,
    proposal,
    explicitKey: derivedKey !== undefined,
    replaces: options.replaces ?? tier === 'procedural',
    derivedFrom: input.derivedFrom ?? [],
  };
}

/**
 * Checks a namespace: one or more non-empty string labels without `.` or `:` (the same rule
 * as LangGraph stores, whose paths join labels with them).
 *
 * @throws VeridexError `input_invalid` naming the offending label.
 */
export function assertNamespace(namespace: readonly string[]): void {
  if (!Array.isArray(namespace) || namespace.length === 0) {
    invalid('namespace must be a non-empty array of labels, e.g. ["tenant-1", "user-42"].');
  }
  for (const label of namespace) {
    if (typeof label !== 'string' || label.length === 0 || /[.:\0]/.test(label)) {
      invalid(
        `namespace label ${JSON.stringify(label)} must be a non-empty string without ".", ":" or NUL.`,
      );
    }
  }
}

/** Lower-cased, whitespace-collapsed form of a subject or predicate (the key is built from it). */
export function normalizeTerm(term: string): string {
  return term.normalize('NFKC').trim().toLowerCase().replace(/\s+/g, ' ');
}

function invalid(message: string): never {
  throw new VeridexError('input_invalid', `Memory write rejected: ${message}`);
}
