import { Injectable } from '@nestjs/common';
import { likeContains, type FilterCardColumns, type SqlParams } from '../../../shared/persistence/sql-params.js';
import { GroupFilterApi, type GroupTerm } from '../contracts/group-filter.api.js';

/** The grouping part of the filter language: an EXISTS over the card's memberships and their groups. */
@Injectable()
export class GroupFilterSql extends GroupFilterApi {
  predicate(term: GroupTerm, card: FilterCardColumns, params: SqlParams): string {
    const types = term.typeIds === null ? '' : ` AND m.type_id = ANY(${params.add(term.typeIds, 'bigint[]')})`;
    const title =
      term.match === 'equals'
        ? `lower(g.title) = lower(${params.add(term.title)})`
        : `g.title ILIKE ${params.add(likeContains(term.title))}`;
    return `EXISTS (SELECT 1 FROM grouping.memberships m JOIN grouping.groups g ON g.id = m.group_id
                     WHERE m.card_id = ${card.id}${types} AND ${title})`;
  }
}
