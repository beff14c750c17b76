import { FILTER_PLAN_LIMITS } from '../../src/modules/card-hierarchy/infrastructure/card-filter.sql.js';

/**
 * Runs `work` with some of the filter query's plan limits changed, so that
 * small test data crosses the edges between plans; the limits are restored
 * after it, whatever happens.
 */
export async function withPlanLimits<T>(limits: Partial<typeof FILTER_PLAN_LIMITS>, work: () => Promise<T>): Promise<T> {
  const before = { ...FILTER_PLAN_LIMITS };
  Object.assign(FILTER_PLAN_LIMITS, limits);
  try {
    return await work();
  } finally {
    Object.assign(FILTER_PLAN_LIMITS, before);
  }
}
