import type { ToolCall } from '@langchain/core/messages';
import { VeridexError } from '../errors/index.js';

/** A decision a reviewer may take on a call waiting for approval (LangChain's HITL types). */
export type ReviewDecision = 'approve' | 'edit' | 'reject';

const DECISIONS: readonly ReviewDecision[] = ['approve', 'edit', 'reject'];
const REVIEW_FIELDS: ReadonlySet<string> = new Set([
  'allowedDecisions',
  'argsSchema',
  'description',
]);

/** What the description factory of a {@link ToolReview} is told about the waiting call. */
export interface ReviewFacts {
  threadId: string;
  approvalId: string;
  route: string;
  reason: string;
  /** Approvals needed at the current tier, and approvals counted so far. */
  quorum: { required: number; approved: number };
}

/**
 * How reviewers see and may decide one tool's calls — the counterpart of an entry of
 * LangChain's `humanInTheLoopMiddleware` `interruptOn` (README "Approvals in LangChain's HITL
 * protocol"). Whether a call needs approval at all is the policy's business
 * (`rules.requireApproval`), never this entry's.
 */
export interface ToolReview {
  /**
   * Decisions reviewers may take (default all three). A decision of another type is refused
   * (`decision_not_allowed`) wherever it is made: in a resume, the inbox or the CLI.
   */
  allowedDecisions?: readonly ReviewDecision[];
  /**
   * JSON Schema shown for editing (default: the tool's input schema). Display only: an edit
   * is validated by the tool's own input schema and decided again by the policy.
   */
  argsSchema?: Record<string, unknown>;
  /**
   * The action's description: a string, or a function of the call (its result is shown
   * verbatim; it is the operator's text, not the model's).
   */
  description?: string | ((call: ToolCall, facts: ReviewFacts) => string | Promise<string>);
}

/** Review settings by tool name. */
export type ReviewConfigs = Readonly<Record<string, ToolReview>>;

/**
 * Checks the shape of `review` (a typo in a decision must not widen what reviewers may do).
 * @throws VeridexError `config_invalid` for an unknown or repeated decision, an empty list,
 *   a non-object `argsSchema` or a description that is neither a string nor a function.
 */
export function checkReviewConfigs(review: ReviewConfigs | undefined, where: string): void {
  if (review === undefined) return;
  if (typeof review !== 'object' || review === null || Array.isArray(review)) {
    throw invalid(where, 'review must be an object keyed by tool name.');
  }
  for (const [name, entry] of Object.entries(review)) {
    if (typeof entry !== 'object' || entry === null) {
      throw invalid(where, `review["${name}"] must be an object.`);
    }
    const unknownField = Object.keys(entry).find((field) => !REVIEW_FIELDS.has(field));
    if (unknownField !== undefined) {
      throw invalid(
        where,
        `review["${name}"] has an unknown field "${unknownField.slice(0, 40)}" (fields: ${[...REVIEW_FIELDS].join(', ')}); a misspelt setting would be ignored.`,
      );
    }
    const { allowedDecisions, argsSchema, description } = entry;
    if (allowedDecisions !== undefined) {
      if (!Array.isArray(allowedDecisions) || allowedDecisions.length === 0) {
        throw invalid(where, `review["${name}"].allowedDecisions must list at least one decision.`);
      }
      const seen = new Set<string>();
      for (const decision of allowedDecisions) {
        if (!DECISIONS.includes(decision) || seen.has(decision)) {
          throw invalid(
            where,
            `review["${name}"].allowedDecisions: "${String(decision)}" is not one of ${DECISIONS.join(', ')} or is repeated.`,
          );
        }
        seen.add(decision);
      }
    }
    if (
      argsSchema !== undefined &&
      (typeof argsSchema !== 'object' || argsSchema === null || Array.isArray(argsSchema))
    ) {
      throw invalid(where, `review["${name}"].argsSchema must be a JSON Schema object.`);
    }
    if (
      description !== undefined &&
      typeof description !== 'string' &&
      typeof description !== 'function'
    ) {
      throw invalid(where, `review["${name}"].description must be a string or a function.`);
    }
  }
}

/** True for one of the three decisions a reviewer can take. */
export function isReviewDecision(value: unknown): value is ReviewDecision {
  return DECISIONS.includes(value as ReviewDecision);
}

/** The decisions reviewers may take on calls to `tool`. */
export function allowedDecisionsFor(
  review: ReviewConfigs | undefined,
  tool: string,
): readonly ReviewDecision[] {
  return ownEntry(review, tool)?.allowedDecisions ?? DECISIONS;
}

/** The review entry of `tool`, read as an own property only (`review.constructor` names no tool). */
export function ownEntry(review: ReviewConfigs | undefined, tool: string): ToolReview | undefined {
  return review !== undefined && Object.hasOwn(review, tool) ? review[tool] : undefined;
}

/**
 * The refusal for a decision of type `decision` on a call to `tool`, or undefined when it is
 * allowed.
 */
export function decisionNotAllowed(
  review: ReviewConfigs | undefined,
  tool: string,
  decision: unknown,
): string | undefined {
  const allowed = allowedDecisionsFor(review, tool);
  if (allowed.includes(decision as ReviewDecision)) return undefined;
  return `"${String(decision).slice(0, 40)}" is not a decision reviewers may take on "${tool}" (allowed: ${allowed.join(', ')})`;
}

/**
 * Refuses `review` keys naming none of `known` (a typo would leave its tool with every
 * decision allowed and the default description).
 * @throws VeridexError `config_invalid` listing the unknown keys and the known tools.
 */
export function checkReviewNames(
  unknown: readonly string[],
  known: readonly string[],
  where: string,
): void {
  if (unknown.length === 0) return;
  throw invalid(
    where,
    `review names ${unknown.map((key) => JSON.stringify(key)).join(', ')}, but no tool has that name (tools: ${known.length === 0 ? 'none' : known.map((name) => JSON.stringify(name)).join(', ')}). An unknown name is an error, never ignored.`,
  );
}

function invalid(where: string, message: string): VeridexError {
  return new VeridexError('config_invalid', `${where}: ${message}`);
}
