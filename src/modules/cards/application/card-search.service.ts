import { Injectable } from '@nestjs/common';
import type { Actor } from '../../../shared/domain/actor.js';
import type { ListingPageInfo, ListingRequest } from '../../../shared/http/cursor.js';
import { pageOffset } from '../../../shared/http/pagination.js';
import { WorkspaceApi } from '../../workspace/index.js';
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
 * card JSON (one JSON array, as text) is built in a fixed number of queries
 * while the total is counted.
 */
@Injectable()
export class CardSearchService {
  constructor(
    private readonly workspace: WorkspaceApi,
    private readonly filters: CardFilterService,
    private readonly views: CardViewsService,
  ) {}

  async inProject(projectId: number, filter: FilterParameter, page: ListingRequest, options: SearchOptions, actor: Actor) {
    // The filter's name lookups run beside the access check, which is
    // awaited before any card is read (and whose 404 comes before a 400).
    return this.run([projectId], filter, page, options, actor, this.workspace.requireProject(projectId, actor, 'read'));
  }

  async everywhere(filter: FilterParameter, page: ListingRequest, options: SearchOptions, actor: Actor) {
    return this.run(await this.workspace.visibleProjectIds(actor), filter, page, options, actor);
  }

  private async run(
    projectIds: number[],
    filter: FilterParameter,
    page: ListingRequest,
    options: SearchOptions,
    actor: Actor,
    access?: Promise<unknown>,
  ): Promise<{ items: string | number[] } & ListingPageInfo> {
    const from = page.after === null ? { offset: pageOffset(page) } : { after: page.after };
    // One id more than the page tells whether a next page exists (for its cursor).
    const found = await this.filters.start(
      { ...filter, projectIds, withArchived: options.withArchived, limit: page.perPage + 1, from, access },
      actor,
    );
    const ids = found.ids.slice(0, page.perPage);
    const nextAfter = found.ids.length > page.perPage ? ids[ids.length - 1] : null;
    // The card JSON is read while the total is still being counted.
    // Within one project, its field definitions come with the cards' rows.
    const json = () => this.views.byIdsJson(ids, projectIds.length === 1 ? projectIds[0] : undefined);
    const [items, total] = await Promise.all([options.onlyIds ? ids : json(), found.total]);
    return { items, total, nextAfter };
  }
}
