import { Injectable } from '@nestjs/common';
import { UnitOfWork } from '../../../shared/persistence/unit-of-work.js';
import { idIn, textMatchSql, SqlParams, type FilterCardColumns } from '../../../shared/persistence/filter-sql.js';
import { GroupFilterApi, type GroupTerm } from '../contracts/group-filter.api.js';

/** The grouping part of the filter language: groups found by title, then an EXISTS over the card's memberships. */
@Injectable()
export class GroupFilterSql extends GroupFilterApi {
  constructor(private readonly uow: UnitOfWork) {
    super();
  }

  async groupIds(projectIds: number[], terms: GroupTerm[]): Promise<number[][]> {
    const found: number[][] = terms.map(() => []);
    if (!projectIds.length || !terms.length) return found;
    const params = new SqlParams();
    const projects = params.add(projectIds, 'bigint[]');
    const selects = terms.map((term, i) => {
      const types = term.typeIds === null ? '' : ` AND g.type_id = ANY(${params.add(term.typeIds, 'bigint[]')})`;
      const title = textMatchSql('g.title', term.match, term.title, params);
      return `SELECT ${i} AS term, g.id FROM grouping.groups g WHERE g.project_id = ANY(${projects})${types} AND ${title}`;
    });
    const rows = (await this.uow.manager.query(selects.join(' UNION ALL '), params.values)) as Array<{ term: number; id: string | number }>;
    for (const r of rows) found[Number(r.term)].push(Number(r.id));
    return found;
  }

  predicate(groupIds: number[], card: FilterCardColumns, params: SqlParams): string {
    if (!groupIds.length) return 'false';
    return `EXISTS (SELECT 1 FROM grouping.memberships m
                     WHERE m.card_id = ${card.id} AND ${idIn('m.group_id', groupIds, params)})`;
  }

  cardIds(groupIds: number[], params: SqlParams): string {
    return `SELECT m.card_id FROM grouping.memberships m WHERE ${idIn('m.group_id', groupIds, params)}`;
  }
}
