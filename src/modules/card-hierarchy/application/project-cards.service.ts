import { Injectable } from '@nestjs/common';
import type { Actor } from '../../../shared/domain/actor.js';
import type { PageRequest } from '../../../shared/http/pagination.js';
import { pageOffset } from '../../../shared/http/pagination.js';
import { WorkspaceApi } from '../../workspace/index.js';
import type { CardRecord, ProjectListing } from '../contracts/card-hierarchy.api.js';
import { CardListingQueries } from '../infrastructure/card-listing.queries.js';
import { toRecord } from './card-tree.service.js';

/**
 * The project listing: every card of the project but the top-level one, in id
 * order. Totals come from counters kept in the card transactions, so a page
 * costs the same in a project of a million cards.
 */
@Injectable()
export class ProjectCardsService {
  constructor(
    private readonly workspace: WorkspaceApi,
    private readonly cards: CardListingQueries,
  ) {}

  async list(
    projectId: number,
    actor: Actor,
    page: PageRequest,
    opts: ProjectListing,
  ): Promise<{ records: CardRecord[]; ids: number[]; total: number }> {
    await this.workspace.requireProject(projectId, actor, 'read');
    const counters = await this.cards.counters(projectId);
    const total = opts.withArchived ? counters.cardCount : counters.visibleCount;
    const offset = pageOffset(page);
    if (offset >= total) return { records: [], ids: [], total };
    if (opts.onlyIds) {
      return { records: [], ids: await this.cards.listIds(projectId, opts.withArchived, page.perPage, offset), total };
    }
    const rows = await this.cards.listPage(projectId, opts.withArchived, page.perPage, offset);
    return { records: rows.map(toRecord), ids: rows.map((r) => r.id), total };
  }
}
