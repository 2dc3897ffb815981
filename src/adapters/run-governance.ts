import type { ApprovalManager } from '../approvals/index.js';
import type { AuditLog } from '../audit/index.js';
import type { PolicyEngine } from '../policy/index.js';
import type { ToolRegistry } from '../tools/index.js';

/**
 * The governance a thread runs under: where its audit chain and approval requests live, and
 * the policy and tools that decide its calls. Exporting reads the first two; importing writes
 * them and re-derives pending approvals through the policy.
 */
export interface RunGovernance {
  audit?: AuditLog;
  approvals?: ApprovalManager;
  policy?: PolicyEngine;
  registry?: ToolRegistry;
  /** The graph's agent identity (its governed tool node's `agentId`): the proposer of its calls. */
  agentId?: string;
}

interface GovernedNodeLike {
  audit: AuditLog;
  approvals: ApprovalManager;
  policy: PolicyEngine;
  registry: ToolRegistry;
  agentId?: unknown;
}

// Duck-typed so a graph built with another copy of this package is recognised too.
function isGovernedNode(value: unknown): value is GovernedNodeLike {
  if (typeof value !== 'object' || value === null) return false;
  const node = value as Record<string, { [key: string]: unknown } | undefined>;
  return (
    typeof node.audit?.events === 'function' &&
    typeof node.approvals?.request === 'function' &&
    typeof node.policy?.evaluate === 'function' &&
    typeof node.registry?.get === 'function'
  );
}

/**
 * The governed tool nodes of a compiled graph, by node name (`graph.nodes[name].bound`).
 * @example const [[name, node]] = governedNodesOf(graph);
 */
export function governedNodesOf(
  nodes: Record<string, unknown> | undefined,
): Array<[string, GovernedNodeLike]> {
  const found: Array<[string, GovernedNodeLike]> = [];
  for (const [name, node] of Object.entries(nodes ?? {})) {
    const bound = (node as { bound?: unknown } | undefined)?.bound;
    if (isGovernedNode(bound)) found.push([name, bound]);
  }
  return found;
}

/**
 * The governance of a graph's thread: what the caller passed, else what its governed tool
 * node holds — the node named in `prefer` (the node the thread waits on) first, then the
 * first governed node.
 */
export function runGovernanceOf(
  nodes: Record<string, unknown> | undefined,
  given: RunGovernance,
  prefer: readonly string[] = [],
): RunGovernance {
  const candidates = governedNodesOf(nodes);
  const node =
    candidates.find(([name]) => prefer.includes(name))?.[1] ?? candidates[0]?.[1] ?? undefined;
  const pick = <K extends Exclude<keyof RunGovernance, 'agentId'>>(
    key: K,
  ): { [P in K]?: RunGovernance[K] } => {
    const value = given[key] ?? (node?.[key] as RunGovernance[K] | undefined);
    return (value === undefined ? {} : { [key]: value }) as { [P in K]?: RunGovernance[K] };
  };
  const agentId = given.agentId ?? (typeof node?.agentId === 'string' ? node.agentId : undefined);
  return {
    ...pick('audit'),
    ...pick('approvals'),
    ...pick('policy'),
    ...pick('registry'),
    ...(agentId !== undefined ? { agentId } : {}),
  };
}
