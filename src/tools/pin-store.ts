/** The recorded schema hash of one tool, persisted so a change between restarts is caught. */
export interface ToolPin {
  name: string;
  schemaHash: string;
  /** Where the tool came from, e.g. `mcp:weather-server` or `langchain`. */
  source?: string;
  /** ISO 8601 time of pinning. */
  pinnedAt: string;
}

/**
 * Where pins of imported tools live: a lock file (`LockFilePinStore`, commit it with your code)
 * or the database (`PostgresPinStore`). Trust on first use: an unknown tool is pinned; a known
 * tool whose hash changed is a `schema_pin_mismatch`.
 */
export interface PinStore {
  get(name: string): Promise<ToolPin | undefined>;
  set(pin: ToolPin): Promise<void>;
  delete(name: string): Promise<void>;
  list(): Promise<ToolPin[]>;
}

/** A {@link PinStore} in memory (tests; pins do not survive a restart). */
export class MemoryPinStore implements PinStore {
  readonly #pins = new Map<string, ToolPin>();

  async get(name: string): Promise<ToolPin | undefined> {
    const pin = this.#pins.get(name);
    return pin && { ...pin };
  }

  async set(pin: ToolPin): Promise<void> {
    this.#pins.set(pin.name, { ...pin });
  }

  async delete(name: string): Promise<void> {
    this.#pins.delete(name);
  }

  async list(): Promise<ToolPin[]> {
    return [...this.#pins.values()]
      .map((pin) => ({ ...pin }))
      .sort((a, b) => (a.name < b.name ? -1 : 1));
  }
}
