/**
 * Embeddings as stored float arrays: float32, little-endian, in a `bytea`. Every PostgreSQL
 * can hold them, node-postgres returns them as a Buffer without text parsing, and they are
 * the one source the pgvector column, the sketches and the centroids are derived from.
 */

/** Encodes a vector as float32 little-endian bytes. */
export function encodeVector(vector: readonly number[] | Float32Array): Buffer {
  const bytes = Buffer.allocUnsafe(vector.length * 4);
  for (let index = 0; index < vector.length; index++) {
    bytes.writeFloatLE(vector[index]!, index * 4);
  }
  return bytes;
}

/** Decodes float32 little-endian bytes (as written by {@link encodeVector}). */
export function decodeVector(bytes: Uint8Array): Float32Array {
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  // A fresh buffer is 4-byte aligned, and x86/ARM are little-endian, so this is a plain view.
  return new Float32Array(copy.buffer, 0, bytes.byteLength / 4);
}

/** Dot product; equals cosine similarity for L2-normalised vectors. */
export function dot(a: ArrayLike<number>, b: ArrayLike<number>): number {
  const length = Math.min(a.length, b.length);
  let sum = 0;
  for (let index = 0; index < length; index++) sum += a[index]! * b[index]!;
  return sum;
}

/** Cosine similarity in [-1, 1]; 0 when either vector is all zeros. */
export function cosineSimilarity(a: ArrayLike<number>, b: ArrayLike<number>): number {
  const product = dot(a, b);
  const norms = Math.sqrt(dot(a, a) * dot(b, b));
  return norms === 0 ? 0 : product / norms;
}

/** `vector` scaled to unit length (a copy; all zeros stays all zeros). */
export function normalize(vector: ArrayLike<number>): Float32Array {
  const norm = Math.sqrt(dot(vector, vector));
  const result = new Float32Array(vector.length);
  if (norm === 0) return result;
  for (let index = 0; index < vector.length; index++) result[index] = vector[index]! / norm;
  return result;
}

/** pgvector's text form, `[0.1,0.2,...]`; 6 significant digits are below float32 noise. */
export function vectorLiteral(vector: ArrayLike<number>): string {
  let text = '[';
  for (let index = 0; index < vector.length; index++) {
    if (index > 0) text += ',';
    text += Number(vector[index]!.toPrecision(6));
  }
  return `${text}]`;
}
