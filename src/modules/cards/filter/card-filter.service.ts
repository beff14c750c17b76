import { setTimeout as delay } from 'node:timers/promises';
import { Injectable } from '@nestjs/common';
import type { Actor } from '../../../shared/domain/actor.js';
import { CardFilterApi, type CandidateSet, type FilterCondition, type FilterScope, type PageStart } from '../../card-hierarchy/index.js';
import { FieldFilterApi } from '../../fields/index.js';
import { GroupFilterApi, type GroupTerm } from '../../grouping/index.js';
import { IdentityApi } from '../../identity/index.js';
import type { FilterExpr } from './filter.ast.js';
import { candidateSet, compileFilter, fromTermSets, groupTerms, type FilterSqlParts } from './filter.compiler.js';
import { FilterError } from './filter.errors.js';
import { parseFilter } from './filter.parser.js';
import { mentionsArchived, needsSchema, resolveFilter, userMap, userRefs } from './filter.resolver.js';
import { utcDay } from './filter-values.js';

/**
 * How long (ms) a filter's page query runs alone before its count starts
 * beside it. A selective page that is not full answers well within it (and
 * then needs no count); a full page that takes longer loses no more than this
 * before its count starts.
 */
const COUNT_HEAD_START_MS = 1;

/**
 * Group terms looked up in one statement (a UNION ALL of one SELECT each,
 * which the parser nests one level deeper per term): `#x` written 1 300 times
 * passed the embedded database's stack and answered 500.
 */
const GROUP_LOOKUP_BATCH = 200;

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
  /**
   * The caller's access check, if still running: the filter's name lookups
   * (field, group and user definitions, no card) run beside it, and it is
   * awaited before any card is read. Its error comes first (a 404 before a
   * 400 for the filter).
   */
  access?: Promise<unknown>;
}

/** A page of a filter's ids, and its total (see `CardFilterService.start`). */
export interface FilterPage {
  ids: number[];
  total: Promise<number>;
}

/**
 * Runs a filter over the cards of some projects the caller may read (the
 * caller checks access): parse, resolve names against the projects' fields,
 * models and users (and the groups it names), compile, then one query for
 * the page and, unless the page tells the total, one for the count.
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
    const found = await this.start(request, actor);
    return { ids: found.ids, total: await found.total };
  }

  /**
   * The page's ids as soon as they are read, and the total still being
   * counted (on another pooled connection), so the caller can build the
   * page's card JSON while the count runs: the first page of a selective
   * filter then costs about max(page + JSON, count), not their sum.
   * Errors of the filter (400) come from here; `total` only fails with the
   * database, and is always handled, so it may be left unawaited.
   */
  async start(request: FilterRequest, actor: Actor): Promise<FilterPage> {
    try {
      return await this.execute(request, actor);
    } catch (error) {
      if (error instanceof FilterError && error.parameter !== request.parameter) throw error.as(request.parameter);
      throw error;
    }
  }

  private async execute(request: FilterRequest, actor: Actor): Promise<FilterPage> {
    const compiling = this.compile(request, actor);
    if (request.access) {
      compiling.catch(() => undefined);
      await request.access;
    }
    const { expr, where, termSets, candidates } = await compiling;
    const scope: FilterScope = {
      projectIds: request.projectIds,
      withArchived: request.withArchived || mentionsArchived(expr),
    };
    const { limit, from } = request;
    // A page at an offset that is not full ends the listing: its end is the
    // total, and the count (the costly half of a selective filter) is not
    // needed. So the page runs alone for a moment; a page that takes longer
    // (a filter that scans) gets the count beside it on another connection,
    // as the count would most likely be needed anyway. A page after a cursor
    // never tells the total: its count starts at once.
    const page = this.cards.pageIds(scope, where, limit, from, candidates);
    const answered = 'after' in from ? undefined : await Promise.race([page, delay(COUNT_HEAD_START_MS)]);
    const counting = answered === undefined ? this.cards.count(scope, where, termSets, candidates) : null;
    // Handled here so an unneeded count's failure is not an unhandled rejection; awaited below when needed.
    counting?.catch(() => undefined);
    const ids = await page;
    // Nor does an empty page past the end.
    const pageTells = 'offset' in from && ids.length < limit && (ids.length > 0 || from.offset === 0);
    const total = pageTells ? Promise.resolve(from.offset + ids.length) : (counting ?? this.cards.count(scope, where, termSets, candidates));
    total.catch(() => undefined);
    return { ids, total };
  }

  /**
   * The groups each group term names: a term written again (`#x #x`) is
   * looked up once, and at most `GROUP_LOOKUP_BATCH` terms in one statement.
   */
  private async groupIds(projectIds: number[], terms: GroupTerm[]): Promise<Map<GroupTerm, number[]>> {
    const key = (term: GroupTerm) => JSON.stringify([term.typeIds, term.match, term.title]);
    const distinct = [...new Map(terms.map((term) => [key(term), term])).values()];
    const found: number[][] = [];
    for (let i = 0; i < distinct.length; i += GROUP_LOOKUP_BATCH) {
      found.push(...(await this.groups.groupIds(projectIds, distinct.slice(i, i + GROUP_LOOKUP_BATCH))));
    }
    const byKey = new Map(distinct.map((term, i) => [key(term), found[i]]));
    return new Map(terms.map((term) => [term, byKey.get(key(term))!]));
  }

  /** Parses the filter, looks up the names it uses and compiles it. */
  private async compile(
    request: FilterRequest,
    actor: Actor,
  ): Promise<{ expr: FilterExpr; where: FilterCondition; termSets: boolean; candidates?: CandidateSet }> {
    const expr = parseFilter(request.text);
    const refs = userRefs(expr);
    // A filter of card terms and #groups only (`needle`, `#12`, `parent = 7`)
    // names no field: it skips the schema lookup.
    const [schema, users] = await Promise.all([
      needsSchema(expr) ? this.fields.schema(request.projectIds) : { fields: [], models: [] },
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
    const parts: FilterSqlParts = {
      cards: this.cards,
      fields: this.fields,
      groups: this.groups,
      groupIds: await this.groupIds(request.projectIds, groupTerms(condition)),
    };
    return { expr, where: compileFilter(condition, parts), termSets: fromTermSets(condition), candidates: candidateSet(condition, parts) };
  }
}
