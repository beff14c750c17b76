import { UPKEEP_MARK } from '../../src/database/embedded-upkeep.js';

/**
 * The statements a request sent, from a spy on the query runner, as their
 * first two words. The rate limiter's sweep of ended windows
 * (`RateLimitStore.maybeSweep`) runs beside one request in 500, on no
 * request's behalf, and is left out; so is the embedded database's upkeep
 * (`EmbeddedUpkeep`: a look at its write-ahead log after each commit and
 * every 10 s, then ANALYZE or VACUUM), its statements marked `UPKEEP_MARK`.
 */
export function requestStatements(calls: unknown[][]): string[] {
  return calls
    .map(([text]) => String(text).trim())
    .filter((text) => !text.startsWith('DELETE FROM identity.rate_limit_windows'))
    .filter((text) => !text.startsWith(UPKEEP_MARK) && text !== 'ANALYZE')
    .map((text) => text.split(/\s+/).slice(0, 2).join(' '));
}
