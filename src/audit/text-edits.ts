const NO_EDITS = new Int32Array(0);

/**
 * Replacements of stretches of one text, applied at once into one flat string. Adversarial
 * text can call for an edit every few characters; an object per edit and two or three strings
 * per edit in the result (parts to join, or a rope) made collecting garbage most of the time.
 * Here an edit costs three numbers, and the result is written into one buffer of code units
 * (lone surrogates kept exactly).
 */
export class TextEdits {
  // Typed arrays grown by doubling: one slot write per field and edit. Replacements are
  // numbered in a small table (patterns reuse a handful of strings). Allocated at the first
  // edit: most texts need none, and three typed arrays cost more than scanning a short text.
  #at = NO_EDITS;
  #length = NO_EDITS;
  #replacementIndex = NO_EDITS;
  readonly #replacements: string[] = [];
  #replacementIds: Map<string, number> | undefined;
  #lastId = 0;
  #count = 0;
  #ordered = true;

  /** How many edits were added. */
  get size(): number {
    return this.#count;
  }

  /** Replaces the `length` code units at `at` with `replacement`; edits may come in any order. */
  add(at: number, length: number, replacement: string): void {
    const count = this.#count;
    if (count === this.#at.length) this.#grow();
    if (count > 0 && this.#at[count - 1]! > at) this.#ordered = false;
    let id = this.#replacements[this.#lastId] === replacement ? this.#lastId : undefined;
    if (id === undefined) {
      this.#replacementIds ??= new Map();
      id = this.#replacementIds.get(replacement);
      if (id === undefined) {
        id = this.#replacements.length;
        this.#replacements.push(replacement);
        this.#replacementIds.set(replacement, id);
      }
      this.#lastId = id;
    }
    this.#at[count] = at;
    this.#length[count] = length;
    this.#replacementIndex[count] = id;
    this.#count = count + 1;
  }

  #grow(): void {
    const grown = (from: Int32Array) => {
      const to = new Int32Array(Math.max(64, from.length * 2));
      to.set(from);
      return to;
    };
    this.#at = grown(this.#at);
    this.#length = grown(this.#length);
    this.#replacementIndex = grown(this.#replacementIndex);
  }

  /**
   * `text` with the edits applied in order of position (equal positions in the order added).
   * An edit that starts inside what an earlier one replaced is skipped: two patterns rewrote
   * the same character.
   */
  apply(text: string): string {
    const count = this.#count;
    if (count === 0) return text;
    const at = this.#at;
    const lengths = this.#length;
    const ids = this.#replacementIndex;
    const replacements = this.#replacements;
    const order = this.#ordered
      ? undefined
      : Array.from({ length: count }, (_, edit) => edit).sort((a, b) => at[a]! - at[b]! || a - b);
    let bound = text.length;
    for (let edit = 0; edit < count; edit++) {
      bound += Math.max(0, replacements[ids[edit]!]!.length - lengths[edit]!);
    }
    const out = new Uint16Array(bound);
    let written = 0;
    let size = 0;
    for (let position = 0; position < count; position++) {
      const edit = order ? order[position]! : position;
      const start = at[edit]!;
      if (start < written) continue;
      for (let index = written; index < start; index++) out[size++] = text.charCodeAt(index);
      const replacement = replacements[ids[edit]!]!;
      for (let index = 0; index < replacement.length; index++) {
        out[size++] = replacement.charCodeAt(index);
      }
      written = start + lengths[edit]!;
    }
    for (let index = written; index < text.length; index++) out[size++] = text.charCodeAt(index);
    return Buffer.from(out.buffer, 0, size * 2).toString('utf16le');
  }
}
