import { Injectable } from '@nestjs/common';
import type { Actor } from '../../../shared/domain/actor.js';
import { keysetPage, listingStart, type ListingRequest } from '../../../shared/http/cursor.js';
import { WorkspaceApi } from '../../workspace/index.js';
import type { ProjectListing, ProjectPage } from '../contracts/card-hierarchy.api.js';
import { CardListingQueries } from '../infrastructure/card-listing.queries.js';
import { splitRole, withRole } from './card-access.service.js';

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
    const from = listingStart(page);
    // The caller's role in the project's team is read in the page's own
    // statement (one round trip for access, page and totals), and no card is
    // read at all for a caller who is not a member (another team's project
    // costs them an index lookup, not a page).
    const role = this.workspace.projectRoleSql('$1', '$3');
    // One row more than the page tells whether a next page exists (for its cursor).
    const found = await this.cards.listPage(projectId, { ...opts, limit: page.perPage + 1, from }, withRole(opts.alsoRead, role), actor.userId, `${role} IS NOT NULL`);
    const { role: memberRole, read } = splitRole(found?.extras ?? {});
    this.workspace.projectAccessFromRole(memberRole, 'read');
    if (!found) return { cards: [], ids: [], total: 0, nextAfter: null, read: {} };
    const total = opts.withArchived ? found.cardCount : found.visibleCount;
    const { items: ids, nextAfter } = keysetPage(found.ids, page.perPage, (id) => id);
    return { cards: found.rows.slice(0, page.perPage), ids, total, nextAfter, read };
  }
}
