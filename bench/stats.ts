/** Small statistics helpers shared by the benchmarks. */

/** The p-th percentile (0–100) of `samples` by nearest rank. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

/** The median of `samples`. */
export function median(samples: readonly number[]): number {
  return percentile(samples, 50);
}

/** Runs `fn` `times` times and returns each duration in milliseconds. */
export async function timeRepeated(
  times: number,
  fn: () => unknown | Promise<unknown>,
): Promise<number[]> {
  const samples: number[] = [];
  for (let index = 0; index < times; index++) {
    const start = performance.now();
    await fn();
    samples.push(performance.now() - start);
  }
  return samples;
}

/** Formats milliseconds with sensible precision. */
export function ms(value: number): string {
  return value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2);
}
