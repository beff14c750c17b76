/**
 * The statements a request sent, from a spy on the query runner, as their
 * first two words. The rate limiter's sweep of ended windows
 * (`RateLimitStore.maybeSweep`) runs beside one request in 500, on no
 * request's behalf, and is left out; so is the embedded database's look at
 * its write-ahead log and its ANALYZE (`EmbeddedStatistics`, every 10 s).
 */
export function requestStatements(calls: unknown[][]): string[] {
  return calls
    .map(([text]) => String(text).trim())
    .filter((text) => !text.startsWith('DELETE FROM identity.rate_limit_windows'))
    .filter((text) => !text.includes('pg_current_wal_lsn()') && text !== 'ANALYZE')
    .map((text) => text.split(/\s+/).slice(0, 2).join(' '));
}
