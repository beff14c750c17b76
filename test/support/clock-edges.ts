/**
 * Waits until the clock is at least `marginMs` away from the next multiple
 * of `periodMs` (in UTC): work that must not straddle such an edge starts
 * after it instead. The database cuts its windows and days on this machine's
 * clock in tests.
 */
async function awayFromEdge(periodMs: number, marginMs: number): Promise<void> {
  const into = Date.now() % periodMs;
  if (into > periodMs - marginMs) await new Promise((r) => setTimeout(r, periodMs - into + 500));
}

/**
 * Rate-limit windows are fixed and cut on the clock's minutes
 * (`rate-limit.store.ts`): a burst that starts in a window's last seconds
 * straddles two windows and is never refused. Tests that count a burst up to
 * its limit wait out those seconds first.
 */
export const awayFromWindowEdge = (): Promise<void> => awayFromEdge(60_000, 10_000);

/**
 * `today` in a filter, and a card's `created` day, change at midnight UTC: a
 * test that writes dates relative to today and reads them back a while later
 * starts at least two minutes before it, or after it.
 */
export const awayFromMidnightUtc = (): Promise<void> => awayFromEdge(86_400_000, 120_000);
