import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from '@jest/globals';

// The built function (npm test builds dist/ first), in a process of its own:
// the V8 flag it sets is process-wide.
const root = path.resolve(import.meta.dirname, '../../..');
const HEAP_GROWTH = pathToFileURL(path.join(root, 'dist/src/lifecycle/heap-growth.js')).href;

/**
 * What an import does to the heap, reduced: some live data, and a stream of
 * objects that live long enough to be promoted and then die. Prints the
 * largest old-space size seen.
 */
const WORKLOAD = `
import v8 from 'node:v8';
import { applyHeapGrowth } from ${JSON.stringify(HEAP_GROWTH)};
applyHeapGrowth(Number(process.env.PERCENT));
const live = Array.from({ length: 300000 }, (_, i) => ({ i, s: 'live ' + i }));
const ring = new Array(100000);
let peak = 0;
for (let n = 0; n < 4000000; n++) {
  ring[n % ring.length] = { n, s: 'batch ' + n, a: [n, n + 1] };
  if (n % 10000 === 0) peak = Math.max(peak, v8.getHeapSpaceStatistics().find((s) => s.space_name === 'old_space').space_used_size);
}
process.stdout.write(JSON.stringify({ peak, live: live.length }));
`;

function peakOldSpace(percent: number): number {
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', WORKLOAD], {
    env: { PATH: process.env.PATH, PERCENT: String(percent) },
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(run.stderr);
  return (JSON.parse(run.stdout) as { peak: number }).peak;
}

describe('HEAP_GROWING_PERCENT', () => {
  it('keeps the old generation near what is live, where V8 alone lets it grow much further', () => {
    const own = peakOldSpace(0);
    const bounded = peakOldSpace(50);
    expect(own).toBeGreaterThan(0);
    expect(bounded).toBeLessThan(own * 0.75);
  }, 60_000);
});
