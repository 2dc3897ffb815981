/**
 * True for LangGraph's control-flow signals raised inside a node — `GraphInterrupt` (from
 * `interrupt()`), `NodeInterrupt`, `ParentCommand` — which every wrapper must re-throw
 * untouched. Same test as `isGraphBubbleUp` from `@langchain/langgraph` (a test checks the two
 * agree on real instances); written out here so that loading the tools module, e.g. in a
 * sandbox child process, does not load LangGraph (≈ 0.4 s).
 */
export function isGraphBubbleUp(error: unknown): boolean {
  return (
    typeof error === 'object' &&
    error !== null &&
    (error as { is_bubble_up?: unknown }).is_bubble_up === true
  );
}
