import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { VeridexError } from '../errors/index.js';
import type { PinStore, ToolPin } from './pin-store.js';

/** Default lock file name, in the working directory. */
export const DEFAULT_LOCK_FILE = 'veridex.tools.lock.json';

interface LockFileJson {
  lockfileVersion: 1;
  tools: Record<string, { schemaHash: string; source?: string; pinnedAt: string }>;
}

/**
 * Pins in a JSON lock file (default `veridex.tools.lock.json`), like a package lock: commit it,
 * and a tool whose schema or description changed since shows up as `schema_pin_mismatch` in
 * every environment. Written atomically (temporary file + rename), keys sorted.
 *
 * @example const pins = new LockFilePinStore(); // ./veridex.tools.lock.json
 */
export class LockFilePinStore implements PinStore {
  readonly path: string;
  #cache: Map<string, ToolPin> | undefined;

  constructor(path: string = DEFAULT_LOCK_FILE) {
    this.path = resolve(path);
  }

  async get(name: string): Promise<ToolPin | undefined> {
    const pin = (await this.#load()).get(name);
    return pin && { ...pin };
  }

  async set(pin: ToolPin): Promise<void> {
    const pins = await this.#load();
    pins.set(pin.name, { ...pin });
    await this.#save(pins);
  }

  async delete(name: string): Promise<void> {
    const pins = await this.#load();
    if (pins.delete(name)) await this.#save(pins);
  }

  async list(): Promise<ToolPin[]> {
    return [...(await this.#load()).values()].map((pin) => ({ ...pin }));
  }

  async #load(): Promise<Map<string, ToolPin>> {
    if (this.#cache) return this.#cache;
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      this.#cache = new Map();
      return this.#cache;
    }
    const json = parseLockFile(text, this.path);
    this.#cache = new Map(
      Object.entries(json.tools).map(([name, pin]) => [name, { name, ...pin }]),
    );
    return this.#cache;
  }

  async #save(pins: Map<string, ToolPin>): Promise<void> {
    const tools: LockFileJson['tools'] = {};
    for (const name of [...pins.keys()].sort()) {
      const { schemaHash, source, pinnedAt } = pins.get(name)!;
      tools[name] = { schemaHash, ...(source === undefined ? {} : { source }), pinnedAt };
    }
    const body: LockFileJson = { lockfileVersion: 1, tools };
    await mkdir(dirname(this.path), { recursive: true });
    const temporary = `${this.path}.${process.pid}.tmp`;
    await writeFile(temporary, `${JSON.stringify(body, null, 2)}\n`);
    await rename(temporary, this.path);
  }
}

function parseLockFile(text: string, path: string): LockFileJson {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new VeridexError(
      'config_invalid',
      `Tool lock file ${path} is not valid JSON; fix or delete it.`,
      { cause: error },
    );
  }
  const tools = (json as LockFileJson | null)?.tools;
  const valid =
    (json as LockFileJson | null)?.lockfileVersion === 1 &&
    typeof tools === 'object' &&
    tools !== null &&
    Object.values(tools).every(
      (pin) => typeof pin?.schemaHash === 'string' && /^[0-9a-f]{64}$/.test(pin.schemaHash),
    );
  if (!valid) {
    throw new VeridexError(
      'config_invalid',
      `Tool lock file ${path} is not a version 1 lock file ({ lockfileVersion: 1, tools: { name: { schemaHash } } }); fix or delete it.`,
    );
  }
  return json as LockFileJson;
}
