import v8 from 'node:v8';

/**
 * How far V8 lets the old generation grow past what the last full collection
 * kept before it collects again. Left to itself, V8 allows up to four times
 * the live size; an import's row batches are short-lived but survive long
 * enough to be promoted, so a 100 000-row import then ends near 300 MB of RSS
 * for some 45 MB of live objects (docs/PERFORMANCE.md, issue 11). At 50 % the
 * same import peaks under 200 MB in the same time. The flag is read by V8 at
 * each collection, so setting it at start-up is enough; 0 keeps V8's own.
 */
export function applyHeapGrowth(percent: number): void {
  if (percent > 0) v8.setFlagsFromString(`--heap-growing-percent=${percent}`);
}

/**
 * Every object of a request is allocated young and dies young. V8's
 * allocation-site pretenuring guesses otherwise from time to time (a site
 * whose objects happened to survive a few scavenges, often during start-up)
 * and from then on allocates that site's objects straight in the old
 * generation; whatever young objects they point to then survive every
 * scavenge until the next full collection. Measured on card creation: 0.3 to
 * 1.1 MB promoted per scavenge with it, 15 KB without, scavenges of 2–2.5 ms
 * instead of 1 ms (docs/PERFORMANCE.md, issue 15, eighth pass). Set before
 * the app's code is compiled, so no allocation site is ever pretenured.
 */
export function keepRequestsYoung(): void {
  v8.setFlagsFromString('--no-allocation-site-pretenuring');
}
