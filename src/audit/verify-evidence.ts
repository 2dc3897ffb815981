import { VeridexError } from '../errors/index.js';
import { checkSignatures, type SignatureCheck } from './check-signatures.js';
import { decodeBase64Strict, preAuthEncoding } from './dsse.js';
import { eventTree } from './event-tree.js';
import {
  countEventTypes,
  distinctRunIds,
  EVIDENCE_FORMAT,
  EVIDENCE_FORMAT_V1,
  EVIDENCE_PAYLOAD_TYPE,
  type EvidenceBody,
} from './evidence-body.js';
import type { EvidenceVerifier } from './signer.js';
import type { TraceEvent } from './trace-event.js';
import { checkTreeHead, TREE_HEAD_FORMAT } from './tree-head.js';
import { verifyChain } from './verify-chain.js';
import { checkDecisions, type DecisionCheck, type TrustedApprover } from './verify-decisions.js';
import {
  checkEvidenceLog,
  checkSince,
  type EarlierView,
  type EvidenceLogCheck,
} from './verify-evidence-log.js';
import { checkExecutedCalls } from './verify-executions.js';

export type { EvidenceLogCheck, SignatureCheck };
/** The outcome of {@link verifyEvidence}. */
export interface EvidenceVerification {
  /** True only when at least one signature verifies with a given key, none fails, and the body is intact. */
  valid: boolean;
  /** Why it is not valid, in the order found; empty when valid. */
  reasons: string[];
  signatures: SignatureCheck[];
  /** The decoded body when it could be decoded (even if invalid, for inspection). */
  body: EvidenceBody | undefined;
  /** Every approval decision in the bundle: who decided what, and whether it verifies. */
  decisions: DecisionCheck[];
  /**
   * The bundle's place in its thread's transparency log: the tree over its events, its link to
   * the previous head, and (with the `previous` option) the check against an earlier view.
   */
  log?: EvidenceLogCheck;
}

/** Options for {@link verifyEvidence}. */
export interface VerifyEvidenceOptions {
  /** Verifiers for the keys you trust (`new Ed25519Verifier(publicKey)`, an `HmacSigner`, …). */
  keys: readonly EvidenceVerifier[];
  /**
   * The approver directory you trust (`parseApprovers(readFileSync('approvers.json'))`): each
   * signed decision's key must be one of its approver's. Without it, decision signatures are
   * still checked, against the keys recorded in the bundle, and `keyTrusted` stays false — and
   * they do not count toward any executed call's quorum (see `trustBundleKeys`).
   */
  approvers?: readonly TrustedApprover[];
  /**
   * An earlier view of the same thread: an older evidence bundle (verified with the same keys)
   * or a signed tree head (`body.log.treeHead` of an older bundle, a line of a witness head file).
   * The bundle is valid only if its events are an honest extension of it — nothing the older
   * view covered was rewritten, dropped, inserted or reordered (RFC 9162 consistency proof).
   */
  previous?: unknown;
  /**
   * Accept approvals decided in the explicit `unverified` development mode (bare names). Off by
   * default: such a bundle is invalid, because nobody proved who decided. With it, those
   * decisions still show as `unverified`; on a request opened `signed` they never count.
   */
  allowUnverified?: boolean;
  /**
   * Count approvals signed by keys only the bundle vouches for. Off by default: without
   * `approvers`, a bundle whose executed calls needed approval is invalid — whoever holds the
   * evidence key could have minted the approver keys too. The named opt-in for bundles from
   * a deployment whose approver list you do not have (`veridex verify --trust-bundle-keys`).
   */
  trustBundleKeys?: boolean;
}

/**
 * Verifies a sealed evidence bundle offline. Detects any changed byte (strict base64, DSSE
 * signature), wrong or unknown keys, events dropped, inserted, reordered or edited (hash
 * chain, head hash, counts), and approval decisions that do not verify (each signed
 * decision's signature and statement, its key against `approvers`, and every approval's
 * quorum). v2 bundles also carry a signed tree head (RFC 9162 Merkle root over the events)
 * and a consistency proof from the thread's previous head; with `previous`, the bundle must
 * extend that older bundle or head. Never throws: garbage input yields `valid: false` with a reason.
 *
 * @example
 * const result = verifyEvidence(JSON.parse(text), { keys: [new Ed25519Verifier(publicKey)] });
 * if (!result.valid) console.error(result.reasons);
 */
export function verifyEvidence(
  bundle: unknown,
  options: VerifyEvidenceOptions,
): EvidenceVerification {
  const reasons: string[] = [];
  const signatures: SignatureCheck[] = [];
  const fail = (reason: string, body?: EvidenceBody): EvidenceVerification => ({
    valid: false,
    reasons: [...reasons, reason],
    signatures,
    body,
    decisions: [],
  });
  if (typeof bundle !== 'object' || bundle === null || Array.isArray(bundle)) {
    return fail('bundle is not a JSON object');
  }
  const envelope = bundle as Record<string, unknown>;
  if (envelope.payloadType !== EVIDENCE_PAYLOAD_TYPE) {
    return fail(`payloadType is not "${EVIDENCE_PAYLOAD_TYPE}"`);
  }
  if (typeof envelope.payload !== 'string') return fail('payload is missing');
  const payload = decodeBase64Strict(envelope.payload);
  if (!payload) return fail('payload is not canonical base64 (a byte was changed)');
  if (!Array.isArray(envelope.signatures) || envelope.signatures.length === 0) {
    return fail('bundle has no signatures');
  }

  const message = preAuthEncoding(EVIDENCE_PAYLOAD_TYPE, payload);
  const signed = checkSignatures(
    message,
    envelope.signatures as unknown[],
    options.keys,
    'payload or signature was changed',
  );
  signatures.push(...signed.signatures);
  reasons.push(...signed.problems);

  let body: EvidenceBody;
  try {
    body = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(payload)) as EvidenceBody;
  } catch {
    return fail('payload is not UTF-8 JSON');
  }
  const checked = checkBody(body);
  reasons.push(...checked.problems);
  const unverifiedOption = { allowUnverified: options.allowUnverified === true };
  // The decision and execution checks read events as events; a malformed one (no object
  // payload, no type) is already a problem of the chain above, and must not crash them.
  const events = Array.isArray(body?.events) ? body.events.filter(isEventShaped) : undefined;
  const decisions = events
    ? checkDecisions(events, options.approvers, unverifiedOption)
    : { checks: [], problems: [] };
  reasons.push(...decisions.problems);
  if (events) {
    reasons.push(
      ...checkExecutedCalls(events, decisions.checks, {
        ...unverifiedOption,
        trustBundleKeys: options.trustBundleKeys === true,
      }),
    );
  }
  let log: EvidenceLogCheck | undefined;
  if (checked.known) {
    // The tree only when the chain recomputed: then every event hash is a well-formed SHA-256.
    const tree = checked.chainValid ? eventTree(body.events) : undefined;
    const logCheck = checkEvidenceLog(body, tree, options.keys);
    reasons.push(...logCheck.problems);
    log = logCheck.log;
    if (options.previous !== undefined) {
      const earlier = earlierView(options.previous, options);
      reasons.push(...earlier.problems);
      if (tree && log && earlier.view) {
        const since = checkSince(body, tree, earlier.view);
        reasons.push(...since.problems);
        log.since = since.since;
      }
    }
  }
  return {
    valid: reasons.length === 0,
    reasons,
    signatures,
    body,
    decisions: decisions.checks,
    ...(log ? { log } : {}),
  };
}

// The `previous` option as a head: an older bundle is verified in full first (its v1 head is
// the tree over its events, which its signature vouches for); a head needs a trusted signature.
function earlierView(
  previous: unknown,
  options: VerifyEvidenceOptions,
): { problems: string[]; view?: EarlierView } {
  const isBundle = typeof previous === 'object' && previous !== null && 'payloadType' in previous;
  if (!isBundle) {
    const head = checkTreeHead(previous, options.keys);
    if (head.problems.length > 0 || !head.head) {
      return { problems: head.problems.map((problem) => `the older head: ${problem}`) };
    }
    return { problems: [], view: { kind: 'head', head: head.head } };
  }
  const older = verifyEvidence(previous, {
    keys: options.keys,
    ...(options.approvers ? { approvers: options.approvers } : {}),
    ...(options.allowUnverified ? { allowUnverified: true } : {}),
  });
  if (!older.valid || !older.body || !older.log) {
    return { problems: [`the older bundle does not verify: ${older.reasons.join('; ')}`] };
  }
  const head = older.body.log?.treeHead ?? {
    format: TREE_HEAD_FORMAT,
    scope: 'thread' as const,
    threadId: older.body.threadId,
    treeSize: older.log.treeSize,
    rootHash: older.log.rootHash,
    timestamp: older.body.createdAt,
  };
  return { problems: [], view: { kind: 'bundle', head, events: older.body.events } };
}

function checkBody(body: EvidenceBody): {
  problems: string[];
  known: boolean;
  chainValid: boolean;
} {
  const fail = (problem: string) => ({ problems: [problem], known: false, chainValid: false });
  if (typeof body !== 'object' || body === null) return fail('body is not an object');
  if (body.format !== EVIDENCE_FORMAT && body.format !== EVIDENCE_FORMAT_V1) {
    return fail(`body format is not "${EVIDENCE_FORMAT}" (or "${EVIDENCE_FORMAT_V1}")`);
  }
  if (!Array.isArray(body.events)) return fail('body has no events');
  const problems: string[] = [];
  const events = body.events as TraceEvent[];
  const chain = verifyChain(events);
  if (!chain.valid) {
    problems.push(`event chain is broken at event ${chain.brokenAt}: ${chain.reason}`);
  } else {
    if (body.chain?.head !== chain.head) problems.push('chain head hash does not match the events');
    if (body.chain?.length !== chain.length)
      problems.push('chain length does not match the events');
  }
  if (events.some((event) => event?.threadId !== body.threadId)) {
    problems.push('an event belongs to another thread');
  }
  if (!sameCounts(body.counts, countEventTypes(events))) {
    problems.push('event counts do not match the events');
  }
  if (JSON.stringify(body.runIds) !== JSON.stringify(distinctRunIds(events))) {
    problems.push('run ids do not match the events');
  }
  return { problems, known: true, chainValid: chain.valid };
}

function sameCounts(claimed: unknown, actual: Record<string, number>): boolean {
  if (typeof claimed !== 'object' || claimed === null) return false;
  const entries = Object.entries(claimed as Record<string, unknown>);
  return (
    entries.length === Object.keys(actual).length &&
    entries.every(([type, count]) => actual[type] === count)
  );
}

/**
 * {@link verifyEvidence}, throwing when the bundle is not valid — for code paths that must
 * stop on bad evidence (an import, a payout release gated on an auditor's bundle).
 *
 * @throws VeridexError `evidence_invalid` with the reasons in the message and `details.reasons`.
 * @example const { body } = assertValidEvidence(bundle, { keys: [auditorKey] });
 */
export function assertValidEvidence(
  bundle: unknown,
  options: VerifyEvidenceOptions,
): EvidenceVerification & { body: EvidenceBody } {
  const result = verifyEvidence(bundle, options);
  if (!result.valid || !result.body) {
    throw new VeridexError(
      'evidence_invalid',
      `The evidence bundle does not verify: ${result.reasons.join('; ')}.`,
      {
        details: { reasons: result.reasons },
      },
    );
  }
  return result as EvidenceVerification & { body: EvidenceBody };
}

/** An event with a string type and an object payload: what the approval checks can read. */
function isEventShaped(event: unknown): event is TraceEvent {
  if (typeof event !== 'object' || event === null) return false;
  const { type, payload } = event as { type?: unknown; payload?: unknown };
  return (
    typeof type === 'string' &&
    typeof payload === 'object' &&
    payload !== null &&
    !Array.isArray(payload)
  );
}
