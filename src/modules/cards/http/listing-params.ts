import { InvalidListingInputError } from '../domain/cards.errors.js';
import type { FilterParameter, SearchOptions } from '../application/card-search.service.js';

export function readBool(value: string | undefined, field: string): boolean {
  if (value === undefined || value === '') return false;
  const v = value.toLowerCase();
  if (v === 'true' || v === '1') return true;
  if (v === 'false' || v === '0') return false;
  throw new InvalidListingInputError(field, 'must be true or false');
}

/** `filter`, or its other name `filters` (the original's clients send that); null when neither is given. */
export function readFilter(query: { filter?: string; filters?: string }): FilterParameter | null {
  if (query.filter !== undefined && query.filters !== undefined) {
    throw new InvalidListingInputError('filters', 'give either filter or filters (another name for it), not both');
  }
  if (query.filter !== undefined) return { text: query.filter, parameter: 'filter' };
  if (query.filters !== undefined) return { text: query.filters, parameter: 'filters' };
  return null;
}

export function readListingOptions(query: { with_archived?: string; only_ids?: string }): SearchOptions {
  return { withArchived: readBool(query.with_archived, 'with_archived'), onlyIds: readBool(query.only_ids, 'only_ids') };
}

/**
 * The scope of a listing's cursors: the route and what selects its rows (the
 * archived cards, the filter text). A cursor works only in its own scope.
 */
export function listingScope(route: string, options: { withArchived: boolean }, filter: FilterParameter | null): string {
  return `${route}${options.withArchived ? '?with_archived' : ''}${filter ? `?filter=${filter.text}` : ''}`;
}
