import { VeridexError } from '../errors/index.js';

/** Shares of the effective window V_e per section; they must sum to at most 1. */
export interface SectionBudgets {
  /** System prompt and procedural instructions. */
  system: number;
  /** Retrieved memories, packed by relevance per token. */
  memories: number;
  /** Tool definitions bound to the model. */
  tools: number;
  /** Conversation history, including the summary of older turns. */
  history: number;
  /** Kept free for the model's answer. */
  headroom: number;
}

/** The split of seed 000 §3: 15 / 25 / 15 / 35 / 10 per cent of V_e. */
export const DEFAULT_SECTION_BUDGETS: Readonly<SectionBudgets> = Object.freeze({
  system: 0.15,
  memories: 0.25,
  tools: 0.15,
  history: 0.35,
  headroom: 0.1,
});

/** Section budgets in tokens for one effective window. */
export type SectionTokens = { [Section in keyof SectionBudgets]: number };

/**
 * Fills in defaults and checks the shares.
 * @throws VeridexError `config_invalid` for a negative share or shares summing above 1.
 */
export function resolveBudgets(partial: Partial<SectionBudgets> = {}): SectionBudgets {
  const budgets = { ...DEFAULT_SECTION_BUDGETS, ...partial };
  let sum = 0;
  for (const [section, share] of Object.entries(budgets)) {
    if (typeof share !== 'number' || !Number.isFinite(share) || share < 0 || share > 1) {
      throw new VeridexError(
        'config_invalid',
        `Budget share "${section}" must be a number between 0 and 1 (a fraction of the effective window); got ${String(share)}.`,
      );
    }
    sum += share;
  }
  if (sum > 1 + 1e-9) {
    throw new VeridexError(
      'config_invalid',
      `Budget shares must sum to at most 1; they sum to ${sum.toFixed(3)}. Lower one of system, memories, tools, history or headroom.`,
      { details: { budgets } },
    );
  }
  return budgets;
}

/** Each section's share of `effectiveWindow`, rounded down to whole tokens. */
export function sectionTokens(effectiveWindow: number, budgets: SectionBudgets): SectionTokens {
  return {
    system: Math.floor(effectiveWindow * budgets.system),
    memories: Math.floor(effectiveWindow * budgets.memories),
    tools: Math.floor(effectiveWindow * budgets.tools),
    history: Math.floor(effectiveWindow * budgets.history),
    headroom: Math.floor(effectiveWindow * budgets.headroom),
  };
}
