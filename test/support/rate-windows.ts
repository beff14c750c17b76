/**
 * Rate-limit windows are fixed and cut on the clock's minutes
 * (`rate-limit.store.ts`): a burst that starts in a window's last seconds
 * straddles two windows and is never refused. Tests that count a burst up to
 * its limit wait out those seconds first. The database cuts the windows; in
 * tests it runs on this machine, so this clock is its clock.
 */
export async function awayFromWindowEdge(): Promise<void> {
  const intoMinute = Date.now() % 60_000;
  if (intoMinute > 50_000) await new Promise((r) => setTimeout(r, 60_000 - intoMinute + 500));
}
