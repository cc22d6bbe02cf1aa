/** Summary of a latency sample in milliseconds. */
export interface LatencySummary {
  count: number;
  meanMs: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

/** The value at quantile `q` (0..1) of an ascending array, by the nearest-rank method; NaN when empty. */
export function quantile(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank];
}

/** Mean, p50, p99 and max of a sample (in ms); the array is sorted in place. */
export function summarize(samples: number[]): LatencySummary {
  samples.sort((a, b) => a - b);
  let sum = 0;
  for (const s of samples) sum += s;
  return {
    count: samples.length,
    meanMs: samples.length ? sum / samples.length : Number.NaN,
    p50Ms: quantile(samples, 0.5),
    p99Ms: quantile(samples, 0.99),
    maxMs: samples.length ? samples[samples.length - 1] : Number.NaN,
  };
}

/** Jain's fairness index of per-participant counts: 1 when all are equal, 1/n when one got everything. */
export function jainIndex(counts: readonly number[]): number {
  let sum = 0;
  let squares = 0;
  for (const c of counts) {
    sum += c;
    squares += c * c;
  }
  return squares === 0 ? Number.NaN : (sum * sum) / (counts.length * squares);
}

/** Up to `points` evenly spaced quantiles of an ascending sample, for plotting its CDF. */
export function cdfPoints(sorted: readonly number[], points = 400): { x: number; y: number }[] {
  if (sorted.length === 0) return [];
  const out: { x: number; y: number }[] = [];
  const step = Math.max(1, Math.floor(sorted.length / points));
  for (let i = 0; i < sorted.length; i += step) out.push({ x: sorted[i], y: (i + 1) / sorted.length });
  out.push({ x: sorted[sorted.length - 1], y: 1 });
  return out;
}
