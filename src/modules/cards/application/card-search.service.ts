import { Injectable } from '@nestjs/common';
import type { Actor } from '../../../shared/domain/actor.js';
import { pageOffset, type PageRequest } from '../../../shared/http/pagination.js';
import { WorkspaceApi } from '../../workspace/index.js';
import type { CardView } from '../contracts/cards.api.js';
import { CardFilterService } from '../filter/card-filter.service.js';
import { CardViewsService } from './card-views.service.js';

/** A filter as the request sent it: the text and the name of its parameter (`filter` or `filters`). */
export interface FilterParameter {
  text: string;
  parameter: string;
}

export interface SearchOptions {
  withArchived: boolean;
  onlyIds: boolean;
}

/**
 * Card listings with a filter: one project (GET /projects/{id}/cards?filter=)
 * or every project the caller can see in every team (GET /search). The
 * filter runs as one query for the page and one for the total; the page's
 * card JSON is then built in a fixed number of queries.
 */
@Injectable()
export class CardSearchService {
  constructor(
    private readonly workspace: WorkspaceApi,
    private readonly filters: CardFilterService,
    private readonly views: CardViewsService,
  ) {}

  async inProject(projectId: number, filter: FilterParameter, page: PageRequest, options: SearchOptions, actor: Actor) {
    await this.workspace.requireProject(projectId, actor, 'read');
    return this.run([projectId], filter, page, options, actor);
  }

  async everywhere(filter: FilterParameter, page: PageRequest, options: SearchOptions, actor: Actor) {
    return this.run(await this.workspace.visibleProjectIds(actor), filter, page, options, actor);
  }

  private async run(
    projectIds: number[],
    filter: FilterParameter,
    page: PageRequest,
    options: SearchOptions,
    actor: Actor,
  ): Promise<{ items: CardView[] | number[]; total: number }> {
    const { ids, total } = await this.filters.run(
      { ...filter, projectIds, withArchived: options.withArchived, limit: page.perPage, offset: pageOffset(page) },
      actor,
    );
    return { items: options.onlyIds ? ids : await this.views.byIds(ids), total };
  }
}
