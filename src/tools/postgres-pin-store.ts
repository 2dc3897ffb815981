import type { Database } from '../db/database.js';
import type { PinStore, ToolPin } from './pin-store.js';
import { DELETE_PIN, GET_PIN, LIST_PINS, UPSERT_PIN } from './sql.js';

interface PinRow {
  name: string;
  schema_hash: string;
  source: string | null;
  pinned_at: string;
}

/**
 * Pins in `veridex_tool_pins` (PostgreSQL or PGlite; run `migrate()` first): every process of a
 * deployment sees the same pins, so a tool that changed since any of them pinned it is caught.
 *
 * @example const registry = new ToolRegistry({ pins: new PostgresPinStore(db) });
 */
export class PostgresPinStore implements PinStore {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  async get(name: string): Promise<ToolPin | undefined> {
    const row = (await this.#db.query<PinRow>(GET_PIN, [name])).rows[0];
    return row && toPin(row);
  }

  async set(pin: ToolPin): Promise<void> {
    await this.#db.query(UPSERT_PIN, [pin.name, pin.schemaHash, pin.source ?? null, pin.pinnedAt]);
  }

  async delete(name: string): Promise<void> {
    await this.#db.query(DELETE_PIN, [name]);
  }

  async list(): Promise<ToolPin[]> {
    return (await this.#db.query<PinRow>(LIST_PINS)).rows.map(toPin);
  }
}

function toPin(row: PinRow): ToolPin {
  return {
    name: row.name,
    schemaHash: row.schema_hash,
    pinnedAt: row.pinned_at,
    ...(row.source === null ? {} : { source: row.source }),
  };
}
