import { performance } from 'node:perf_hooks';

export interface Timing {
  count: number;
  seconds: number;
  /** Completed operations per second. */
  rate: number;
  medianMs: number;
  p95Ms: number;
}

export function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

export function summarize(latencies: number[], seconds: number): Timing {
  const sorted = [...latencies].sort((a, b) => a - b);
  return {
    count: latencies.length,
    seconds,
    rate: latencies.length / seconds,
    medianMs: percentile(sorted, 50),
    p95Ms: percentile(sorted, 95),
  };
}

/**
 * Runs `task(i)` for i in [0, total) with `concurrency` workers; each worker
 * starts its next task as soon as its previous one ends (closed loop).
 * Stops early (after at least `minCount`) once `maxSeconds` have passed.
 */
export async function runPool(
  total: number,
  concurrency: number,
  task: (i: number) => Promise<void>,
  opts: { maxSeconds?: number; minCount?: number; latencies?: number[] } = {},
): Promise<Timing> {
  const latencies: number[] = opts.latencies ?? [];
  let next = 0;
  const start = performance.now();
  const deadline = opts.maxSeconds ? start + opts.maxSeconds * 1000 : Infinity;
  const minCount = opts.minCount ?? total;
  const worker = async () => {
    for (;;) {
      if (next >= total) return;
      if (next >= minCount && performance.now() > deadline) return;
      const i = next++;
      const t0 = performance.now();
      await task(i);
      latencies.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, concurrency) }, worker));
  return summarize(latencies, (performance.now() - start) / 1000);
}
