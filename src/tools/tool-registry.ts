import type { AuditLog } from '../audit/audit-log.js';
import { deriveEventId } from '../audit/trace-event.js';
import { VeridexError } from '../errors/index.js';
import { canonicalJsonSchemaOf } from './json-schema.js';
import type { PinStore } from './pin-store.js';
import { schemaHashOf } from './schema-hash.js';
import { toolNameKey } from './tool-name-key.js';
import type { AnyGovernedTool } from './types.js';

/** Options for {@link ToolRegistry}. */
export interface ToolRegistryOptions {
  /** Persisted pins for {@link ToolRegistry.registerPinned} (lock file or database). */
  pins?: PinStore;
  /** Where pin mismatches found at registration are reported (`security_event`). */
  audit?: AuditLog;
  /** Thread of those registration-time events (default `veridex:tools`). */
  auditThreadId?: string;
}

/**
 * The tools an agent may call, each pinned to its schema hash at registration. `runTool`
 * (given `registry`) re-computes the hash from the tool's current fields before every call; a
 * description edited at run time or a swapped schema fails with `schema_pin_mismatch` and the
 * call does not run. `registerPinned` also checks persisted pins, catching changes between
 * restarts (an MCP server that changes a tool after it was approved: a "rug pull").
 *
 * @example
 * const registry = new ToolRegistry().register(getWeather, sendEmail);
 * await runTool(getWeather, args, { registry });
 */
export class ToolRegistry {
  readonly #tools = new Map<string, { tool: AnyGovernedTool; pin: string }>();
  /** {@link toolNameKey} → the registered name holding it. */
  readonly #keys = new Map<string, string>();
  readonly #options: ToolRegistryOptions;

  constructor(options: ToolRegistryOptions = {}) {
    this.#options = options;
  }

  /**
   * Registers tools, pinning each to its current schema hash. Re-registering the same
   * contract is a no-op.
   * @throws VeridexError `schema_pin_mismatch` if a tool's fields no longer match its own
   * `schemaHash`, or a different contract is already registered under its name;
   * `tool_name_clash` if another tool's name differs from it only in case, `-` or `_`
   * (see `toolNameKey`).
   */
  register(...tools: AnyGovernedTool[]): this {
    for (const tool of tools) {
      const key = toolNameKey(tool.name);
      const holder = this.#keys.get(key);
      if (holder !== undefined && holder !== tool.name) {
        throw new VeridexError(
          'tool_name_clash',
          `Tool "${tool.name}" and the registered tool "${holder}" are one name to a model (they differ only in case, "-" or "_"); rename one.`,
          { details: { tool: tool.name, registered: holder } },
        );
      }
      const current = schemaHashOf(tool);
      if (current !== tool.schemaHash)
        throw mismatch(tool.name, tool.schemaHash, current, 'its own schemaHash');
      const existing = this.#tools.get(tool.name);
      if (existing && existing.pin !== current) {
        throw mismatch(
          tool.name,
          existing.pin,
          current,
          'the contract already registered under this name',
        );
      }
      this.#tools.set(tool.name, { tool, pin: current });
      this.#keys.set(key, tool.name);
    }
    return this;
  }

  /**
   * Checks tools against the persisted pins (pinning unknown ones: trust on first use), then
   * registers them. A tool listed in `accept` is re-pinned to its current hash (after review).
   * @throws VeridexError `schema_pin_mismatch` naming every changed tool (after writing a
   * `security_event` each); none of the tools is registered then.
   */
  async registerPinned(
    tools: readonly AnyGovernedTool[],
    options: { source?: string; accept?: readonly string[] } = {},
  ): Promise<this> {
    const store = this.#options.pins;
    if (!store)
      throw new VeridexError(
        'config_invalid',
        'ToolRegistry.registerPinned needs a pin store: new ToolRegistry({ pins }).',
      );
    await checkPins(tools, store, { ...options, ...this.#auditOptions() });
    return this.register(...tools);
  }

  /** The registered tool called `name`. */
  get(name: string): AnyGovernedTool | undefined {
    return this.#tools.get(name)?.tool;
  }

  /** Every registered tool, in registration order. */
  list(): AnyGovernedTool[] {
    return [...this.#tools.values()].map((entry) => entry.tool);
  }

  /** The pinned hash of `name`. */
  pinOf(name: string): string | undefined {
    return this.#tools.get(name)?.pin;
  }

  /**
   * Compares `tool`'s current fields with the pin of its name; returns the error instead of
   * throwing (the per-call hot path). `undefined` means the pin holds.
   */
  check(tool: AnyGovernedTool): VeridexError | undefined {
    const entry = this.#tools.get(tool.name);
    if (entry === undefined) {
      return new VeridexError(
        'tool_not_found',
        `Tool "${tool.name}" is not registered; register it with registry.register(tool) before calling it.`,
        { details: { tool: tool.name } },
      );
    }
    const current = currentHashOf(tool);
    if (current !== entry.pin) {
      return mismatch(tool.name, entry.pin, current, 'the pin recorded at registration');
    }
    return reviewHold(tool);
  }

  /** {@link check}, throwing. @throws VeridexError `schema_pin_mismatch` or `tool_not_found`. */
  verify(tool: AnyGovernedTool): void {
    const problem = this.check(tool);
    if (problem) throw problem;
  }

  #auditOptions(): { audit?: AuditLog; auditThreadId?: string } {
    return {
      ...(this.#options.audit ? { audit: this.#options.audit } : {}),
      ...(this.#options.auditThreadId ? { auditThreadId: this.#options.auditThreadId } : {}),
    };
  }
}

/**
 * Checks `tools` against `store`: unknown tools are pinned, changed ones reported.
 * @throws VeridexError `schema_pin_mismatch` (details.tools lists each change).
 */
export async function checkPins(
  tools: readonly AnyGovernedTool[],
  store: PinStore,
  options: {
    source?: string;
    accept?: readonly string[];
    audit?: AuditLog;
    auditThreadId?: string;
  } = {},
): Promise<void> {
  const changed: Array<{ tool: string; pinned: string; current: string; findings?: string[] }> = [];
  const fresh: AnyGovernedTool[] = [];
  for (const tool of tools) {
    const current = schemaHashOf(tool);
    const pin = await store.get(tool.name);
    if (pin === undefined || options.accept?.includes(tool.name)) fresh.push(tool);
    else if (pin.schemaHash !== current) {
      // A changed tool the import also holds for poisoning: the reviewer is told here, since
      // the hold's own report (`settleReviews`) runs only once the change is accepted.
      const findings = tool.review ? [...tool.review.reasons] : undefined;
      changed.push({
        tool: tool.name,
        pinned: pin.schemaHash,
        current,
        ...(findings && { findings }),
      });
    }
  }
  if (changed.length > 0) {
    const threadId = options.auditThreadId ?? 'veridex:tools';
    await options.audit?.appendMany(
      changed.map((change) => ({
        threadId,
        type: 'security_event' as const,
        eventId: deriveEventId(
          threadId,
          'security_event',
          'schema_pin_mismatch',
          change.tool,
          change.current,
        ),
        payload: {
          reason: 'schema_pin_mismatch',
          toolName: change.tool,
          pinnedHash: change.pinned,
          currentHash: change.current,
          ...(change.findings ? { findings: change.findings } : {}),
          source: options.source ?? null,
        },
      })),
    );
    const names = changed.map((change) => `"${change.tool}"`).join(', ');
    const holds = changed.flatMap((change) =>
      change.findings
        ? [
            ` Tool "${change.tool}" as changed is also held for tool poisoning (${change.findings.join(', ')}): accept re-pins it but does not release the hold; after reviewing the findings, release it with acceptReview: ['${change.tool}'].`,
          ]
        : [],
    );
    throw new VeridexError(
      'schema_pin_mismatch',
      `Tool ${names} changed since it was pinned (description, schemas, safety class, annotations, secrets, allowlists or timeout differ). Review the change; if it is expected, re-pin with accept: [${changed.map((change) => `'${change.tool}'`).join(', ')}] or delete its entry from the lock file.${holds.join('')}`,
      { details: { tools: changed } },
    );
  }
  const pinnedAt = new Date().toISOString();
  for (const tool of fresh) {
    await store.set({
      name: tool.name,
      schemaHash: schemaHashOf(tool),
      pinnedAt,
      ...(options.source ? { source: options.source } : {}),
    });
  }
}

// A frozen tool whose nested fields are frozen (what tool() returns) cannot change, so its
// recomputed hash is remembered per object; any edited copy is a new object and is recomputed.
// (A Proxy cannot fake this: frozen properties must read the same through every trap.) What
// its schemas render to can change in place (registry metadata), so the remembered hash holds
// only while both renderings are the ones it was computed from.
const verifiedHashes = new WeakMap<object, { hash: string; input: string; output: string }>();

function currentHashOf(tool: AnyGovernedTool): string {
  const input = canonicalJsonSchemaOf(tool.input, 'input');
  const output = canonicalJsonSchemaOf(tool.output, 'output');
  const cached = verifiedHashes.get(tool);
  if (cached !== undefined && cached.input === input && cached.output === output) {
    return cached.hash;
  }
  const hash = schemaHashOf(tool);
  if (
    Object.isFrozen(tool) &&
    isDeepFrozen(tool.annotations) &&
    isDeepFrozen(tool.secrets) &&
    isDeepFrozen(tool.sandbox)
  ) {
    verifiedHashes.set(tool, { hash, input, output });
  }
  return hash;
}

function isDeepFrozen(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return true;
  return Object.isFrozen(value) && Object.values(value).every(isDeepFrozen);
}

function mismatch(name: string, pinned: string, current: string, against: string): VeridexError {
  return new VeridexError(
    'schema_pin_mismatch',
    `Tool "${name}" does not match ${against}: its name, description, schemas, safety class, annotations, secrets, allowlists or timeout changed (pinned ${pinned.slice(0, 12)}…, now ${current.slice(0, 12)}…). The call was not run.`,
    { details: { tool: name, pinnedHash: pinned, currentHash: current } },
  );
}

/**
 * The refusal of a tool held for review (see `ToolReview`), or `undefined`. Every call path
 * checks it: the planner through {@link ToolRegistry.check}, the executor directly.
 */
export function reviewHold(tool: AnyGovernedTool): VeridexError | undefined {
  if (tool.review?.state !== 'review_required') return undefined;
  return new VeridexError(
    'tool_review_required',
    `Tool "${tool.name}" is held for review: its imported description or schema carried instructions to the model (${tool.review.reasons.join(', ')}), which were removed. A reviewer must release it by name (acceptReview: ['${tool.name}'] on the import) before it can be called.`,
    { details: { tool: tool.name, reasons: [...tool.review.reasons] } },
  );
}
