import type { MemorySource } from '../policy/index.js';
import type { StoredTier } from './types.js';

/** One entry of the thread's scratchpad (working memory), kept in graph state. */
export interface WorkingMemoryItem {
  content: string;
  /** Keep it beyond the run: the evolve node writes it to long-term memory (through the policy). */
  promote?: boolean;
  /** Tier a promoted item is written to. Default `semantic`. */
  tier?: StoredTier;
  confidence?: number;
  subject?: string;
  predicate?: string;
  object?: string;
  tags?: readonly string[];
  /** Where the item came from. Default `model`. */
  source?: MemorySource;
}

/** An update of the working-memory channel: items to append, or a reset. */
export type WorkingMemoryUpdate = readonly WorkingMemoryItem[] | { reset: true };

/** The update that empties working memory (the evolve node returns it at the end of a run). */
export const RESET_WORKING_MEMORY: { reset: true } = Object.freeze({ reset: true });

/**
 * The reducer of the working-memory channel: appends items, or empties the scratchpad on
 * {@link RESET_WORKING_MEMORY}.
 *
 * @example Annotation<WorkingMemoryItem[], WorkingMemoryUpdate>({ reducer: workingMemoryReducer, default: () => [] })
 */
export function workingMemoryReducer(
  current: readonly WorkingMemoryItem[],
  update: WorkingMemoryUpdate,
): WorkingMemoryItem[] {
  if (!Array.isArray(update)) return [];
  return [...current, ...(update as readonly WorkingMemoryItem[])];
}
