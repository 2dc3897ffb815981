/** Bits in a sketch: Hamming distance over 256 random hyperplanes estimates the angle to ~6°. */
export const SKETCH_BITS = 256;

/**
 * Random-hyperplane sketches (SimHash): bit i is the sign of the vector's projection on a
 * fixed random direction i, so the Hamming distance between two sketches estimates the angle
 * between the vectors. Stored as `bit(256)`, they let plain PostgreSQL pre-select vector
 * candidates with `bit_count(sketch # $query)` where pgvector is not installed. The planes
 * come from a fixed seed, so sketches written by different processes are comparable.
 */
export class Sketcher {
  readonly dimensions: number;
  readonly #planes: Float32Array;

  constructor(dimensions: number, seed = 0x5eed) {
    this.dimensions = dimensions;
    this.#planes = new Float32Array(SKETCH_BITS * dimensions);
    let state = seed >>> 0 || 1;
    for (let index = 0; index < this.#planes.length; index++) {
      // xorshift32, centred: a symmetric distribution is all SimHash needs.
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
      this.#planes[index] = (state >>> 0) / 0x100000000 - 0.5;
    }
  }

  /** The sketch of `vector` as a PostgreSQL bit-string literal of {@link SKETCH_BITS} characters. */
  sketch(vector: ArrayLike<number>): string {
    // Projections only touch non-zero coordinates: hashed-feature embeddings are sparse.
    const nonZero: number[] = [];
    for (let index = 0; index < this.dimensions; index++) {
      if (vector[index] !== 0) nonZero.push(index);
    }
    let bits = '';
    for (let plane = 0; plane < SKETCH_BITS; plane++) {
      const offset = plane * this.dimensions;
      let projection = 0;
      for (const index of nonZero) projection += this.#planes[offset + index]! * vector[index]!;
      bits += projection > 0 ? '1' : '0';
    }
    return bits;
  }
}
