import type { NodeSample } from './graph.js';

/** What the coordinator hands a worker (JSON in the SOAK_WORKER env variable). */
export interface WorkerConfig {
  /** Database URL with `?schema=` and `application_name=`. */
  url: string;
  /** Unique per process: the owner token of the threads it claims. */
  token: string;
  concurrency: number;
  evidenceKeyHex: string;
  evidenceDir: string;
  approvalTimeoutMs: number;
}

/** What the coordinator hands an approver process (JSON in SOAK_APPROVER). */
export interface ApproverConfig {
  url: string;
  name: string;
  /** This process's index (0 or 1): single approvals are split between the two by id. */
  index: number;
  /** Approver ids and their private key files. */
  identities: Array<{ id: string; keyFile: string }>;
  maxDecisionDelayMs: number;
  /** Whether this process takes the `late` fate: deciding after the deadline. */
  decidesLate: boolean;
  seed: number;
}

/** How one `advance` of a thread ended. */
export interface AdvanceOutcome {
  kind: 'start' | 'resume' | 'continue' | 'none';
  result: 'waiting' | 'completed' | 'retry' | 'failed';
  ms: number;
  code?: string;
  message?: string;
}

/** Worker → coordinator, over IPC, about once a second. */
export interface WorkerReport {
  type: 'report';
  token: string;
  samples: NodeSample[];
  advances: AdvanceOutcome[];
  active: number;
}

/** Approver → coordinator. */
export interface ApproverReport {
  type: 'approver';
  name: string;
  decisions: number;
  refusals: Record<string, number>;
  errors: Record<string, number>;
}
