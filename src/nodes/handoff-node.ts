import { Annotation, type LangGraphRunnableConfig, Send } from '@langchain/langgraph';
import type { z } from 'zod';
import { type AuditLog, canonicalJson, deriveEventId, sha256Hex } from '../audit/index.js';
import {
  type BranchResult,
  type ContextEnvelope,
  type ContextLedger,
  type EnvelopeKey,
  type EnvelopeRejectionReason,
  MemoryContextLedger,
  type MergeStrategy,
  sealEnvelope,
  verifyEnvelope,
} from '../context/index.js';
import { VeridexError } from '../errors/index.js';

/** Recorded in state when `handoffNode` rolled back instead of accepting an envelope. */
export interface HandoffRejection {
  reason: EnvelopeRejectionReason;
  message: string;
  /** Version of the refused envelope, when it had one. */
  version?: number;
  /** Version restored from the ledger. */
  restoredVersion: number;
}

/** Appends branch results; `null` clears them (the join does, once merged). */
export function branchResultsReducer(
  current: BranchResult[] = [],
  update: BranchResult[] | null,
): BranchResult[] {
  return update === null ? [] : [...current, ...update];
}

/**
 * State channels the hand-off nodes use with their default keys: the signed `envelope`, its
 * verified `context` payload, the last `handoffRejection`, and fork-join `branchResults`.
 * Spread `HandoffAnnotation.spec` into your own `Annotation.Root`.
 */
export const HandoffAnnotation = Annotation.Root({
  envelope: Annotation<ContextEnvelope | undefined>(),
  context: Annotation<unknown>(),
  handoffRejection: Annotation<HandoffRejection | null | undefined>(),
  branchResults: Annotation<BranchResult[], BranchResult[] | null>({
    reducer: branchResultsReducer,
    default: () => [],
  }),
});

interface LedgerOptions {
  /** Default: a `MemoryContextLedger` of this node. Share one ledger between the nodes of a graph. */
  ledger?: ContextLedger;
  /** Default: the thread id (`config.configurable.thread_id`), else `default`. */
  ledgerId?: string;
  /** When given, decisions are appended as `handoff_validated` / `handoff_rejected` events. */
  audit?: AuditLog;
  envelopeKey?: string;
  payloadKey?: string;
}

/** Options for {@link handoffNode}. */
export interface HandoffNodeOptions<Schema extends z.ZodType> extends LedgerOptions {
  schema: Schema;
  keys: readonly EnvelopeKey[];
  /** `rollback`: restore the ledger's last valid envelope and go on; `fail`: throw `envelope_invalid`. */
  onInvalid: 'rollback' | 'fail';
  requiredKeys?: readonly string[];
  maxTokens?: number;
  maxAgeMs?: number;
  /** State key for the rejection record. Default `handoffRejection`. */
  rejectionKey?: string;
}

/**
 * The boundary between two agents or into a subgraph: verifies the incoming envelope
 * (signature, key, audience — this node's ledger, the thread id by default, and this node when
 * the sender named one —, expiry, schema, required keys, token budget), commits it to the ledger and exposes
 * the typed payload under `context`. An invalid envelope never reaches the next agent: with
 * `onInvalid: 'rollback'` the last valid envelope is restored (and the rejection recorded);
 * with `'fail'` the run stops with `envelope_invalid`. An older envelope replayed after newer
 * ones is refused (`version_not_monotonic`). Replay-safe: a re-run commits nothing twice.
 *
 * @throws VeridexError `envelope_invalid` with `fail`, or with `rollback` when no valid envelope exists yet.
 * @example
 * graph.addNode('receive', handoffNode({ schema: Findings, keys: [key], onInvalid: 'rollback', ledger }));
 */
export function handoffNode<Schema extends z.ZodType>(options: HandoffNodeOptions<Schema>) {
  const ledger = options.ledger ?? new MemoryContextLedger();
  const envelopeKey = options.envelopeKey ?? 'envelope';
  const payloadKey = options.payloadKey ?? 'context';
  const rejectionKey = options.rejectionKey ?? 'handoffRejection';
  return async function receiveHandoff(
    state: Record<string, unknown>,
    config: LangGraphRunnableConfig = {},
  ): Promise<Record<string, unknown>> {
    const { ledgerId, threadId } = identify(options, config);
    const incoming = state[envelopeKey];
    const node = config.metadata?.langgraph_node;
    const result = verifyEnvelope(incoming, {
      keys: options.keys,
      // Bound to this ledger (the thread by default) and, when the sender named one, this node.
      audience: { ledger: ledgerId, ...(typeof node === 'string' ? { node } : {}) },
      schema: options.schema,
      ...(options.requiredKeys ? { requiredKeys: options.requiredKeys } : {}),
      ...(options.maxTokens === undefined ? {} : { maxTokens: options.maxTokens }),
      ...(options.maxAgeMs === undefined ? {} : { maxAgeMs: options.maxAgeMs }),
    });
    let failure = result.valid ? undefined : result.error;
    if (result.valid) {
      failure = await commitOrRefusal(ledger, ledgerId, result.envelope);
      if (!failure) {
        await record(
          options.audit,
          threadId,
          'handoff_validated',
          [result.envelope.version, result.envelope.signature],
          {
            ledgerId,
            version: result.envelope.version,
            keyId: result.envelope.keyId,
            tokens: result.tokens,
          },
        );
        return {
          [payloadKey]: result.payload,
          [envelopeKey]: result.envelope,
          [rejectionKey]: null,
        };
      }
    }
    const reason = failure!.details.reason as EnvelopeRejectionReason;
    const version = versionOf(incoming);
    const fingerprint = sha256Hex(safeCanonical(incoming));
    await record(options.audit, threadId, 'handoff_rejected', [fingerprint], {
      ledgerId,
      reason,
      message: failure!.message,
      action: options.onInvalid,
      ...(version === undefined ? {} : { version }),
    });
    if (
      reason === 'signature_mismatch' ||
      reason === 'unknown_key' ||
      reason === 'wrong_audience'
    ) {
      await record(options.audit, threadId, 'security_event', ['envelope', fingerprint], {
        kind: reason === 'wrong_audience' ? 'envelope_replay' : 'envelope_tampering',
        reason,
        ledgerId,
        ...(version === undefined ? {} : { version }),
      });
    }
    if (options.onInvalid === 'fail') throw failure;
    const head = await ledger.head(ledgerId);
    if (!head) {
      throw new VeridexError(
        'envelope_invalid',
        `${failure!.message} There is no earlier valid envelope in ledger "${ledgerId}" to roll back to.`,
        {
          details: { ...failure!.details, ledgerId },
          cause: failure,
        },
      );
    }
    const rejection: HandoffRejection = {
      reason,
      message: failure!.message,
      restoredVersion: head.version,
      ...(version === undefined ? {} : { version }),
    };
    return {
      [payloadKey]: options.schema.parse(head.payload),
      [envelopeKey]: head,
      [rejectionKey]: rejection,
    };
  };
}

/** Options for {@link forkHandoff}. */
export interface ForkHandoffOptions<State> {
  /** The node every branch runs (it receives a {@link BranchInput}). */
  node: string;
  /** Branch ids, fixed or chosen from the state. */
  branches: readonly string[] | ((state: State) => readonly string[]);
  envelopeKey?: string;
}

/** What each fork-join branch node receives: the same frozen snapshot for every branch. */
export interface BranchInput<Payload = unknown> {
  branch: string;
  snapshot: Payload;
  snapshotVersion: number;
}

/**
 * A conditional edge that fans out with LangGraph's `Send`: every branch gets its own
 * deep-frozen copy of the current envelope's payload, all taken at fork time from one
 * envelope (snapshot isolation), so no branch can see another's writes or later state. Branches return `{ branchResults: [{ branch, payload, confidence }] }`.
 *
 * @example graph.addConditionalEdges('receive', forkHandoff({ node: 'analyst', branches: ['risk', 'pricing'] }), ['analyst']);
 */
export function forkHandoff<State extends Record<string, unknown>>(
  options: ForkHandoffOptions<State>,
) {
  const envelopeKey = options.envelopeKey ?? 'envelope';
  return function fork(state: State): Send[] {
    const envelope = state[envelopeKey] as ContextEnvelope | undefined;
    if (!envelope) {
      throw new VeridexError(
        'envelope_invalid',
        `forkHandoff found no envelope under "${envelopeKey}"; put a handoffNode (or joinHandoff) before the fork.`,
        { details: { reason: 'malformed' } },
      );
    }
    const branches =
      typeof options.branches === 'function' ? options.branches(state) : options.branches;
    // One copy per branch, all taken now from the same envelope: a branch that mutates its
    // copy (where freezing does not survive LangGraph's own copying) cannot reach another's.
    // `Send` copies its arguments, so the copy is frozen after construction.
    return branches.map((branch) => {
      const input: BranchInput = {
        branch,
        snapshot: structuredClone(envelope.payload),
        snapshotVersion: envelope.version,
      };
      const send = new Send(options.node, input);
      deepFreeze((send.args as BranchInput).snapshot);
      return send;
    });
  };
}

/** Options for {@link joinHandoff}. */
export interface JoinHandoffOptions<Payload> extends LedgerOptions {
  strategy: MergeStrategy<Payload>;
  /** Signs the merged envelope. */
  key: EnvelopeKey;
  tokenBudget: number;
  /** Lifetime of the merged envelope. Default 15 minutes (`DEFAULT_ENVELOPE_TTL_MS`). */
  ttlMs?: number;
  /** State key of the branch results. Default `branchResults`. */
  resultsKey?: string;
  now?: () => Date;
}

/**
 * Joins a fork: merges the branch results with a deterministic strategy (the same result
 * whatever order the branches finished in), seals the merge as the next version with the
 * snapshot as its parent, commits it, and clears the results. A re-run finds its own commit.
 *
 * @throws VeridexError `envelope_invalid` on a merge conflict or schema mismatch; `context_budget_exceeded` when the merge is over `tokenBudget`.
 * @example graph.addNode('join', joinHandoff({ strategy: mergeStrategies.confidenceWeighted({ schema }), key, tokenBudget: 4000, ledger }));
 */
export function joinHandoff<Payload>(options: JoinHandoffOptions<Payload>) {
  const ledger = options.ledger ?? new MemoryContextLedger();
  const envelopeKey = options.envelopeKey ?? 'envelope';
  const payloadKey = options.payloadKey ?? 'context';
  const resultsKey = options.resultsKey ?? 'branchResults';
  return async function join(
    state: Record<string, unknown>,
    config: LangGraphRunnableConfig = {},
  ): Promise<Record<string, unknown>> {
    const { ledgerId, threadId } = identify(options, config);
    const snapshot = state[envelopeKey] as ContextEnvelope | undefined;
    const results = (state[resultsKey] ?? []) as BranchResult<Payload>[];
    const merged = options.strategy.merge(results);
    const parent = snapshot?.version;
    const head = await ledger.head<Payload>(ledgerId);
    const repeat =
      head !== undefined &&
      parent !== undefined &&
      head.parents?.includes(parent) === true &&
      canonicalJson(head.payload) === canonicalJson(merged);
    const envelope = repeat
      ? head
      : sealEnvelope(merged, {
          version: Math.max(await ledger.nextVersion(ledgerId), (parent ?? -1) + 1),
          tokenBudget: options.tokenBudget,
          key: options.key,
          audience: ledgerId,
          ...(options.ttlMs === undefined ? {} : { ttlMs: options.ttlMs }),
          ...(parent === undefined ? {} : { parents: [parent] }),
          ...(options.now ? { now: options.now } : {}),
        });
    await ledger.commit(ledgerId, envelope);
    await record(
      options.audit,
      threadId,
      'handoff_validated',
      [envelope.version, envelope.signature],
      {
        ledgerId,
        version: envelope.version,
        merge: options.strategy.name,
        branches: results.map((result) => result.branch).sort(),
      },
    );
    return { [payloadKey]: merged, [envelopeKey]: envelope, [resultsKey]: null };
  };
}

/** Commits, or returns why not (a conflicting, stale or replayed version); other errors propagate. */
async function commitOrRefusal(
  ledger: ContextLedger,
  ledgerId: string,
  envelope: ContextEnvelope,
): Promise<VeridexError | undefined> {
  try {
    await ledger.commit(ledgerId, envelope);
  } catch (error) {
    if (VeridexError.is(error, 'envelope_invalid')) return error;
    throw error;
  }
  // Re-committing a stored envelope is a no-op (so a re-run node is safe), but only the head
  // may arrive again: an older valid envelope replayed here would silently roll state back.
  const head = await ledger.head(ledgerId);
  if (head?.version === envelope.version) return undefined;
  return new VeridexError(
    'envelope_invalid',
    `Envelope version ${envelope.version} is an old hand-off replayed: ledger "${ledgerId}" is at version ${head?.version ?? 'none'}. Seal new state with ledger.nextVersion().`,
    { details: { reason: 'version_not_monotonic', version: envelope.version } },
  );
}

function identify(
  options: LedgerOptions,
  config: LangGraphRunnableConfig,
): { ledgerId: string; threadId: string } {
  const thread = config.configurable?.thread_id;
  const threadId = typeof thread === 'string' ? thread : 'default';
  return { ledgerId: options.ledgerId ?? threadId, threadId };
}

async function record(
  audit: AuditLog | undefined,
  threadId: string,
  type: 'handoff_validated' | 'handoff_rejected' | 'security_event',
  parts: ReadonlyArray<string | number>,
  payload: Record<string, unknown>,
): Promise<void> {
  if (!audit) return;
  await audit.append({ threadId, type, eventId: deriveEventId(threadId, type, ...parts), payload });
}

function versionOf(value: unknown): number | undefined {
  const version = (value as { version?: unknown } | null)?.version;
  return Number.isSafeInteger(version) ? (version as number) : undefined;
}

function safeCanonical(value: unknown): string {
  try {
    return canonicalJson(value ?? null);
  } catch {
    return String(value);
  }
}

function deepFreeze<Value>(value: Value): Value {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
