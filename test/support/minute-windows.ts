/**
 * Rate-limit windows are whole minutes of the clock (identity's
 * rate-limit.store.ts): waits, when past the minute's 30th second, for the
 * next minute, so the attempts a test makes next all fall in one window.
 */
export async function startOfAMinute(): Promise<void> {
  const second = new Date().getSeconds();
  if (second > 30) await new Promise((resolve) => setTimeout(resolve, (61 - second) * 1000));
}
