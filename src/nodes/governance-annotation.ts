import type { BaseMessage } from '@langchain/core/messages';
import { Annotation, MessagesAnnotation } from '@langchain/langgraph';

/**
 * The state the library's nodes share, on top of LangGraph's `MessagesAnnotation`:
 * - `llmInputMessages`: what the context node compiled for the next model call (replaced each turn);
 * - `runId`: the current run (one user turn, across its resumes), used to scope budgets and events;
 * - `budgetExhausted`: set when a run budget ran out, so routing ends the run.
 * Spread `GovernanceAnnotation.spec` into your own `Annotation.Root` to add fields.
 */
export const GovernanceAnnotation = Annotation.Root({
  ...MessagesAnnotation.spec,
  llmInputMessages: Annotation<BaseMessage[]>({
    reducer: (_previous, next) => next,
    default: () => [],
  }),
  runId: Annotation<string>({ reducer: (_previous, next) => next, default: () => '' }),
  budgetExhausted: Annotation<boolean>({
    reducer: (_previous, next) => next,
    default: () => false,
  }),
});

/** The state type of {@link GovernanceAnnotation}. */
export type GovernanceState = typeof GovernanceAnnotation.State;
