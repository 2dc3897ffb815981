import type { ToolCallContext } from '../tools/types.js';
import type { SandboxViolation } from './sandbox.js';

/** What the parent writes to the child's stdin (JSON, bigint tagged). */
export interface ChildRequest {
  /** URL of the module to import (absent when the module is bundled into the entry). */
  module?: string;
  /** The export holding the tool; absent: the export whose tool has `toolName`. */
  exportName?: string;
  toolName: string;
  input: unknown;
  context: ToolCallContext;
  idempotencyKey: string;
  /** The declared secrets' values; never passed through the environment. */
  secrets: Record<string, string>;
  declaredSecrets: string[];
  jailRoot: string;
  /** Every list a host must be on. */
  networkAllowlists: string[][];
  allowHttp: boolean;
  /**
   * Path of the parent's egress proxy socket (IsolatedProcessSandbox with a network
   * allowlist): the child's `http` reaches the network only through it.
   */
  egressSocket?: string;
  /**
   * The file descriptor of a channel to the parent's jailed fs (LocalProcessSandbox): the
   * child's injected `fs` sends every operation there instead of walking paths itself.
   */
  fsChannel?: number;
  /**
   * The environment variables the parent passed; any other the child finds (bubblewrap sets
   * `PWD`) is removed before the tool runs.
   */
  envNames?: string[];
}

/** An error thrown in the child, carried across as data. */
export interface ChildError {
  name: string;
  message: string;
  code?: string;
  retryable?: boolean;
  details?: Record<string, unknown>;
}

/** What the child writes to fd 3 before exiting. */
export type ChildResponse =
  | { ok: true; value: unknown; violations: SandboxViolation[] }
  | { ok: false; error: ChildError; violations: SandboxViolation[] };

/** The file descriptor of the result channel (stdin, stdout, stderr, then this). */
export const RESULT_FD = 3;
