import { Injectable } from '@nestjs/common';
import type { Actor } from '../../../shared/domain/actor.js';
import { CardFilterApi, type FilterScope, type PageStart } from '../../card-hierarchy/index.js';
import { FieldFilterApi } from '../../fields/index.js';
import { GroupFilterApi } from '../../grouping/index.js';
import { IdentityApi } from '../../identity/index.js';
import { compileFilter } from './filter.compiler.js';
import { FilterError } from './filter.errors.js';
import { parseFilter } from './filter.parser.js';
import { mentionsArchived, resolveFilter, userMap, userRefs } from './filter.resolver.js';
import { utcDay } from './filter-values.js';

export interface FilterRequest {
  /** The filter text, and the name of the parameter it came in (`filter` or `filters`), for errors. */
  text: string;
  parameter: string;
  projectIds: number[];
  withArchived: boolean;
  limit: number;
  /** At an offset, or after a keyset id (a cursor). */
  from: PageStart;
  /** Today's UTC day for `today` and `-7d`; the clock's when absent (tests fix it). */
  today?: string;
}

/**
 * Runs a filter over the cards of some projects the caller may read (the
 * caller checks access): parse, resolve names against the projects' fields,
 * models and users, compile, then one query for the page and one for the
 * total, side by side on two connections.
 */
@Injectable()
export class CardFilterService {
  constructor(
    private readonly identity: IdentityApi,
    private readonly cards: CardFilterApi,
    private readonly fields: FieldFilterApi,
    private readonly groups: GroupFilterApi,
  ) {}

  async run(request: FilterRequest, actor: Actor): Promise<{ ids: number[]; total: number }> {
    try {
      return await this.execute(request, actor);
    } catch (error) {
      if (error instanceof FilterError && error.parameter !== request.parameter) throw error.as(request.parameter);
      throw error;
    }
  }

  private async execute(request: FilterRequest, actor: Actor): Promise<{ ids: number[]; total: number }> {
    const expr = parseFilter(request.text);
    const refs = userRefs(expr);
    const [schema, users] = await Promise.all([
      this.fields.schema(request.projectIds),
      this.identity.usersNamed(
        refs.filter((r) => !r.displayName).map((r) => r.name),
        refs.filter((r) => r.displayName).map((r) => r.name),
      ),
    ]);
    const condition = resolveFilter(expr, {
      schema,
      meId: actor.userId,
      today: request.today ?? utcDay(new Date()),
      users: userMap(refs, users),
    });
    const where = compileFilter(condition, { cards: this.cards, fields: this.fields, groups: this.groups });
    const scope: FilterScope = {
      projectIds: request.projectIds,
      withArchived: request.withArchived || mentionsArchived(expr),
    };
    const [ids, total] = await Promise.all([
      this.cards.pageIds(scope, where, request.limit, request.from),
      this.cards.count(scope, where),
    ]);
    return { ids, total };
  }
}
