import { AsyncLocalStorage } from 'node:async_hooks';
import { inspect } from 'node:util';
import { VeridexError } from '../errors/index.js';
import type { SecretRef } from './types.js';

/** One tool execution: secrets handed to it can be revealed only inside it, and only while it runs. */
export class ExecutionScope {
  #active = true;
  constructor(readonly toolName: string) {}
  get active(): boolean {
    return this.#active;
  }
  /** Ends the scope: refs created for it refuse to reveal from now on, even in leftover callbacks. */
  close(): void {
    this.#active = false;
  }
}

const currentScope = new AsyncLocalStorage<ExecutionScope>();

/** Runs `fn` inside `scope`, the only place where that scope's secrets can be revealed. */
export function runInScope<T>(scope: ExecutionScope, fn: () => T): T {
  return currentScope.run(scope, fn);
}

/**
 * A secret handed to a tool. Prints, serialises and inspects as `[REDACTED:NAME]`; the value
 * comes out only through {@link reveal}, inside the execution it was handed to.
 */
export class ScopedSecretRef implements SecretRef {
  readonly name: string;
  readonly #value: string;
  readonly #scope: ExecutionScope;

  constructor(name: string, value: string, scope: ExecutionScope) {
    this.name = name;
    this.#value = value;
    this.#scope = scope;
    Object.freeze(this);
  }

  /**
   * The secret value.
   * @throws VeridexError `secret_access_denied` outside the tool's `execute` (another tool, a
   * callback that outlived the call, code that stole the ref).
   */
  reveal(): string {
    if (currentScope.getStore() !== this.#scope || !this.#scope.active) {
      throw new VeridexError(
        'secret_access_denied',
        `Secret ${this.name} can only be revealed inside the execute() of tool "${this.#scope.toolName}" while it runs.`,
        { details: { secret: this.name, tool: this.#scope.toolName } },
      );
    }
    return this.#value;
  }

  toString(): string {
    return `[REDACTED:${this.name}]`;
  }

  toJSON(): string {
    return this.toString();
  }

  [Symbol.toPrimitive](): string {
    return this.toString();
  }

  [inspect.custom](): string {
    return this.toString();
  }
}
