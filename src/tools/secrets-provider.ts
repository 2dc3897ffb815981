import { SecretScrubber } from '../audit/secret-scrubber.js';
import { VeridexError } from '../errors/index.js';
import { type ExecutionScope, ScopedSecretRef } from './secret-ref.js';
import type { ToolSecrets } from './types.js';

/**
 * Where tools get secrets from. Tools never see raw values from the model or the environment:
 * they get `SecretRef`s for the secrets they declare (`secrets: ['STRIPE_KEY']`), and every
 * value is registered with a {@link SecretScrubber} so that it never reaches an audit event,
 * an error message or a tool message.
 *
 * @example
 * const secrets = SecretsProvider.fromEnv(['STRIPE_KEY']);
 * await runTool(charge, args, { secrets, audit }); // charge's execute: secrets.get('STRIPE_KEY').reveal()
 */
export class SecretsProvider {
  /** Has every value of this provider registered. */
  readonly scrubber: SecretScrubber;
  readonly #values: ReadonlyMap<string, string>;
  readonly #registered = new WeakSet<SecretScrubber>();

  /** @param values name → value. Pass `scrubber` to share one with an `AuditLog`. */
  constructor(values: ReadonlyMap<string, string>, options: { scrubber?: SecretScrubber } = {}) {
    this.#values = new Map(values);
    this.scrubber = options.scrubber ?? new SecretScrubber();
    this.registerWith(this.scrubber);
  }

  /**
   * Secrets from environment variables, only those named in `allowlist` (missing ones are
   * simply absent: `get` fails with `secret_not_found`).
   */
  static fromEnv(
    allowlist: readonly string[],
    env: NodeJS.ProcessEnv = process.env,
    options: { scrubber?: SecretScrubber } = {},
  ): SecretsProvider {
    const values = new Map<string, string>();
    for (const name of allowlist) {
      const value = env[name];
      if (typeof value === 'string' && value.length > 0) values.set(name, value);
    }
    return new SecretsProvider(values, options);
  }

  /** Secrets from a plain object or map (tests, vaults loaded at start-up). */
  static fromMap(
    values: Readonly<Record<string, string>> | ReadonlyMap<string, string>,
    options: { scrubber?: SecretScrubber } = {},
  ): SecretsProvider {
    const map = values instanceof Map ? values : new Map(Object.entries(values));
    return new SecretsProvider(map as ReadonlyMap<string, string>, options);
  }

  /** Names of the secrets this provider holds (never the values). */
  names(): string[] {
    return [...this.#values.keys()];
  }

  /** Registers every value with `scrubber` (once per scrubber), e.g. an `AuditLog`'s. */
  registerWith(scrubber: SecretScrubber): void {
    if (this.#registered.has(scrubber)) return;
    for (const [name, value] of this.#values) scrubber.register(name, value);
    this.#registered.add(scrubber);
  }

  /**
   * The secrets view of one execution: only the names `declared` by the tool, as refs that
   * reveal only inside `scope`.
   */
  forExecution(toolName: string, declared: readonly string[], scope: ExecutionScope): ToolSecrets {
    return secretsView(toolName, declared, this.#values, scope);
  }
}

const NO_VALUES: ReadonlyMap<string, string> = new Map();

/** A secrets view for a tool run without a provider: every `get` fails with `secret_not_found`. */
export function noSecrets(
  toolName: string,
  declared: readonly string[],
  scope: ExecutionScope,
): ToolSecrets {
  return secretsView(toolName, declared, NO_VALUES, scope);
}

function secretsView(
  toolName: string,
  declared: readonly string[],
  values: ReadonlyMap<string, string>,
  scope: ExecutionScope,
): ToolSecrets {
  return Object.freeze({
    get(name: string): ScopedSecretRef {
      if (!declared.includes(name)) {
        throw new VeridexError(
          'secret_not_found',
          `Tool "${toolName}" asked for secret ${String(name)}, which it does not declare. Add it to the tool's secrets: [...] list (declared: ${declared.join(', ') || 'none'}).`,
          { details: { tool: toolName, secret: String(name), declared: false } },
        );
      }
      const value = values.get(name);
      if (value === undefined) {
        throw new VeridexError(
          'secret_not_found',
          `Secret ${name} for tool "${toolName}" is not configured. Provide it through the SecretsProvider (e.g. SecretsProvider.fromEnv([...]) with ${name} in the allowlist and the environment).`,
          { details: { tool: toolName, secret: name, declared: true } },
        );
      }
      return new ScopedSecretRef(name, value, scope);
    },
  });
}
