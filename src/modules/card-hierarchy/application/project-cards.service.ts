import { Injectable } from '@nestjs/common';
import type { Actor } from '../../../shared/domain/actor.js';
import type { ListingRequest } from '../../../shared/http/cursor.js';
import { pageOffset } from '../../../shared/http/pagination.js';
import { WorkspaceApi } from '../../workspace/index.js';
import type { ProjectListing, ProjectPage } from '../contracts/card-hierarchy.api.js';
import { CardListingQueries, type ListingStart } from '../infrastructure/card-listing.queries.js';
import { toRecord } from './card-tree.service.js';

/**
 * The project listing: every card of the project but the top-level one, in id
 * order. Totals come from counters kept in the card transactions, so a page
 * costs the same in a project of a million cards; so does a page at any depth
 * when it is asked for by cursor (keyset).
 */
@Injectable()
export class ProjectCardsService {
  constructor(
    private readonly workspace: WorkspaceApi,
    private readonly cards: CardListingQueries,
  ) {}

  async list(projectId: number, actor: Actor, page: ListingRequest, opts: ProjectListing): Promise<ProjectPage> {
    await this.workspace.requireProject(projectId, actor, 'read');
    const counters = await this.cards.counters(projectId);
    const total = opts.withArchived ? counters.cardCount : counters.visibleCount;
    const from: ListingStart = page.after === null ? { offset: pageOffset(page) } : { after: page.after };
    if ('offset' in from && from.offset >= total) return { records: [], ids: [], total, nextAfter: null };
    // One row more than the page tells whether a next page exists (for its cursor).
    const limit = page.perPage + 1;
    if (opts.onlyIds) {
      const { items: ids, nextAfter } = trim(await this.cards.listIds(projectId, opts.withArchived, limit, from), page.perPage, (id) => id);
      return { records: [], ids, total, nextAfter };
    }
    const rows = await this.cards.listPage(projectId, opts.withArchived, limit, from);
    const { items: kept, nextAfter } = trim(rows, page.perPage, (r) => r.id);
    return { records: kept.map(toRecord), ids: kept.map((r) => r.id), total, nextAfter };
  }
}

/** The page without its look-ahead row, and the last id when that row existed. */
function trim<T>(items: T[], perPage: number, idOf: (item: T) => number): { items: T[]; nextAfter: number | null } {
  if (items.length <= perPage) return { items, nextAfter: null };
  const kept = items.slice(0, perPage);
  return { items: kept, nextAfter: idOf(kept[kept.length - 1]) };
}
