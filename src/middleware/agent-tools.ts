/**
 * Hands a createAgent agent's own tools to every governance middleware it lists, so that a
 * thread resumed in a process that has served no model request yet (a resumer, a restarted
 * server) still gets one approval interrupt per model turn (README "Approvals in LangChain's
 * HITL protocol"). Anything that is not such an agent is left alone. Duck-typed: LangChain's
 * `ReactAgent` keeps its options on `options`, and this module imports nothing, so the resume
 * paths can call it without depending on LangChain.
 */
export function shareAgentTools(graph: unknown): void {
  const options = (graph as { options?: unknown } | null | undefined)?.options as
    | { tools?: unknown; middleware?: unknown }
    | undefined;
  if (typeof options !== 'object' || options === null || !Array.isArray(options.middleware)) {
    return;
  }
  const agentTools = Array.isArray(options.tools) ? options.tools : [];
  const middlewareTools = options.middleware.flatMap((item: { tools?: unknown }) =>
    Array.isArray(item?.tools) ? item.tools : [],
  );
  for (const item of options.middleware) {
    const use = (item as { useAgentTools?: unknown } | null)?.useAgentTools;
    if (typeof use === 'function') use.call(item, [...agentTools, ...middlewareTools]);
  }
}
