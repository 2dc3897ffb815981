/**
 * A fixed set of ASCII needles found in a text in one left-to-right pass (Aho–Corasick, as a
 * full transition table over the needles' own characters). The poisoning scan has about 500
 * distinct needles (`poisoning-needles.ts`), most of them triggers of pairs; finding each with
 * its own `indexOf` read the text once per needle, so a near word common in the text (`user`)
 * made the scan read it hundreds of times. Here the text is read once, whatever the needles.
 *
 * Linear: one table lookup per code unit, plus one step per occurrence found (a position ends
 * at most as many needles as the longest chain of needles that are suffixes of one another).
 * Code units outside the needles' alphabet (any non-ASCII unit) lead back to the root.
 */
export class NeedleAutomaton {
  /** For each ASCII code unit, its column in the table (0: no needle holds it). */
  private readonly column = new Uint8Array(0x80);
  private readonly width: number;
  /** `next[state * width + column]`: the state after reading a unit of that column. */
  private readonly next: Int32Array;
  /** For each state, the needles (indices into `needles`) that end there, suffix links included. */
  private readonly ends: ReadonlyArray<readonly number[]>;
  private readonly index = new Map<string, number>();

  /**
   * @param needles Distinct needles of printable ASCII, at least one character each.
   * @throws RangeError for an empty needle or one outside printable ASCII.
   */
  constructor(readonly needles: readonly string[]) {
    let columns = 1;
    for (const needle of needles) {
      if (needle.length === 0 || !/^[\x20-\x7e]+$/.test(needle)) {
        throw new RangeError(`NeedleAutomaton needs printable ASCII needles; got ${needle}`);
      }
      for (let index = 0; index < needle.length; index++) {
        const code = needle.charCodeAt(index);
        if (this.column[code] === 0) this.column[code] = columns++;
      }
    }
    this.width = columns;
    for (const [which, needle] of needles.entries()) this.index.set(needle, which);
    // The trie, its transitions filled in breadth-first from the suffix links.
    const children: Array<Map<number, number>> = [new Map()];
    const own: number[][] = [[]];
    needles.forEach((needle, which) => {
      let state = 0;
      for (let index = 0; index < needle.length; index++) {
        const column = this.column[needle.charCodeAt(index)]!;
        let child = children[state]!.get(column);
        if (child === undefined) {
          child = children.length;
          children.push(new Map());
          own.push([]);
          children[state]!.set(column, child);
        }
        state = child;
      }
      own[state]!.push(which);
    });
    const next = new Int32Array(children.length * columns);
    const link = new Int32Array(children.length);
    const ends: number[][] = own.map((list) => [...list]);
    const queue: number[] = [];
    for (let column = 0; column < columns; column++) {
      const child = children[0]!.get(column);
      if (child !== undefined) {
        next[column] = child;
        queue.push(child);
      }
    }
    for (let head = 0; head < queue.length; head++) {
      const state = queue[head]!;
      ends[state]!.push(...ends[link[state]!]!);
      for (let column = 0; column < columns; column++) {
        const child = children[state]!.get(column);
        const fallback = next[link[state]! * columns + column]!;
        if (child === undefined) {
          next[state * columns + column] = fallback;
        } else {
          next[state * columns + column] = child;
          link[child] = fallback;
          queue.push(child);
        }
      }
    }
    this.next = next;
    this.ends = ends;
  }

  /** The index of `needle` in {@link needles}, or -1 when it is not one of them. */
  indexOf(needle: string): number {
    return this.index.get(needle) ?? -1;
  }

  /**
   * Where each needle starts in `text`, overlapping occurrences included (what
   * `text.indexOf(needle, at + 1)` from every hit would find), in increasing order; the
   * array at index `i` is for `needles[i]`.
   */
  starts(text: string): number[][] {
    const found = this.needles.map((): number[] => []);
    const { column, next, width, ends, needles } = this;
    let state = 0;
    for (let index = 0; index < text.length; index++) {
      const code = text.charCodeAt(index);
      state = next[state * width + (code < 0x80 ? column[code]! : 0)]!;
      const ending = ends[state]!;
      for (let at = 0; at < ending.length; at++) {
        const which = ending[at]!;
        found[which]!.push(index + 1 - needles[which]!.length);
      }
    }
    return found;
  }
}
