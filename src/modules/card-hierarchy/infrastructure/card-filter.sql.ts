import { Injectable } from '@nestjs/common';
import { UnitOfWork } from '../../../shared/persistence/unit-of-work.js';
import { idIn, textMatchSql, SqlParams, type FilterCardColumns, type FilterOrderOp } from '../../../shared/persistence/filter-sql.js';
import { CardFilterApi, type CandidateSet, type CardTerm, type FilterCondition, type FilterScope, type PageStart, type TimeSpan } from '../contracts/card-filter.api.js';

/**
 * Where the filter query changes its plan, by the number of candidate ids
 * (a constant object; tests lower them to run both plans on small data).
 */
export const FILTER_PLAN_LIMITS = {
  /**
   * Up to this many, candidates that are exactly the matches are read, over
   * several projects, as one sorted list of ids probed in order until the
   * page is full (2-8 ms for a 25 % column over /search's 50 projects,
   * against 24-83 ms for walking each project's listing). Past it, sorting
   * them all would cost more than the walk, which reads at most a page per
   * project.
   */
  sortedCandidates: 100_000,
  /**
   * Up to this many, candidates that are not exactly the matches (`@me and
   * state = done`), over several projects, are looked up by id (about 2 µs
   * each, and a sort-free scan) and checked: below the cost of walking every
   * project's listing index, which is what the filter does past them.
   */
  fewCandidates: 1000,
};

/**
 * Where a page starts and how long it is, as SQL on the page statement's
 * parameters (each written only where the chosen statement uses it).
 */
class PageBounds {
  readonly params = new SqlParams();
  readonly offset: number;

  constructor(
    private readonly from: PageStart,
    readonly limit: number,
  ) {
    this.offset = 'offset' in from ? from.offset : 0;
  }

  /** ` AND column > cursor` after a keyset cursor, else nothing. */
  after(column: string): string {
    return 'after' in this.from ? ` AND ${column} > ${this.params.add(this.from.after, 'bigint')}` : '';
  }

  limitSql(): string {
    const offset = this.offset ? ` OFFSET ${this.params.add(this.offset, 'bigint')}` : '';
    return `LIMIT ${this.params.add(this.limit, 'int')}${offset}`;
  }
}

/** The row of the filter query, as other modules' predicates may name it. */
const ROW: FilterCardColumns = { id: 'c.id', projectId: 'c.project_id', modelId: 'c.model_id' };

/** A timestamp column compared with a span of time, as ranges the column's index can use. */
function spanComparison(column: string, op: FilterOrderOp, span: TimeSpan, params: SqlParams): string {
  const at = (instant: string) => params.add(instant, 'timestamptz');
  switch (op) {
    case '=':
      return `(${column} >= ${at(span.start)} AND ${column} < ${at(span.end)})`;
    case '<':
      return `${column} < ${at(span.start)}`;
    case '<=':
      return `${column} < ${at(span.end)}`;
    case '>':
      return `${column} >= ${at(span.end)}`;
    case '>=':
      return `${column} >= ${at(span.start)}`;
  }
}

/**
 * The card's parent has that ref (in the card's project): an EXISTS the
 * planner turns into a join, the parent found by (project_id, ref) first,
 * then its children by cards_children_idx.
 */
function parentWithRef(ref: number, params: SqlParams): string {
  return `EXISTS (SELECT 1 FROM cards.cards p
                   WHERE p.id = c.parent_id AND p.project_id = c.project_id AND p.ref = ${params.add(ref, 'bigint')})`;
}

/**
 * The filter query over the card table and the SQL of the card's own terms.
 * Other modules' predicates arrive as a condition built on `ROW`; every value
 * is a parameter.
 */
@Injectable()
export class CardFilterSql extends CardFilterApi {
  constructor(private readonly uow: UnitOfWork) {
    super();
  }

  predicate(term: CardTerm, params: SqlParams): string {
    switch (term.kind) {
      case 'title':
        return textMatchSql('c.title', term.match, term.text, params);
      case 'ref':
        return `c.ref ${term.op} ${params.add(term.value, 'bigint')}`;
      case 'hlevel':
        // Depth 1 is the top-level card's children, and the top-level card
        // has ref 0: said so as well, the children index finds them (depth
        // has no index; hlevel = 1 counted the whole project).
        if (term.op === '=' && term.value === 1) return `(c.depth = 1 AND ${parentWithRef(0, params)})`;
        return `c.depth ${term.op} ${params.add(term.value, 'bigint')}`;
      case 'state':
        return `c.state = ${params.add(term.state)}`;
      case 'archived':
        return term.archived ? 'c.hidden' : 'NOT c.hidden';
      case 'parent':
        return parentWithRef(term.ref, params);
      case 'created':
      case 'updated':
        return spanComparison(`c.${term.kind}_at`, term.op, term.span, params);
      case 'model':
        return `coalesce(c.model_id = ANY(${params.add(term.modelIds, 'bigint[]')}), false)`;
    }
  }

  cardsWithRef(ref: number, params: SqlParams): string {
    return `SELECT t.id FROM cards.cards t WHERE t.project_id = c.project_id AND t.ref = ${params.add(ref, 'bigint')}`;
  }

  async pageIds(scope: FilterScope, where: FilterCondition, limit: number, from: PageStart, candidates?: CandidateSet): Promise<number[]> {
    if (!scope.projectIds.length) return [];
    const page = new PageBounds(from, limit);
    const { sql, serial } = await this.pageSql(scope, where, page, candidates);
    const rows = (serial ? await this.serially(sql, page.params) : await this.uow.manager.query(sql, page.params.values)) as Array<{ id: string | number }>;
    return rows.map((r) => Number(r.id));
  }

  /** The page's statement, in the form the filter's shape reads fastest. */
  private async pageSql(scope: FilterScope, where: FilterCondition, page: PageBounds, candidates?: CandidateSet): Promise<{ sql: string; serial: boolean }> {
    const { params } = page;
    if (candidates?.exact && candidates.union) return { sql: this.pageOfCandidates(scope, candidates, page), serial: true };
    if (scope.projectIds.length === 1) {
      // One project compared with `=`: its listing index yields the ids in order.
      const sql = `SELECT c.id FROM cards.cards c
        WHERE ${this.visible(`c.project_id = ${params.add(scope.projectIds[0], 'bigint')}`, scope)}${page.after('c.id')} AND (${where(ROW, params)})
        ORDER BY c.id ${page.limitSql()}`;
      return { sql, serial: false };
    }
    const { sortedCandidates, fewCandidates } = FILTER_PLAN_LIMITS;
    if (candidates) {
      const counted = await this.candidatesUpTo(candidates, candidates.exact ? sortedCandidates : fewCandidates);
      if (candidates.exact && counted <= sortedCandidates) {
        // Serially only where workers could start: a few hundred ids (`@me`)
        // are sorted at once, and the transaction would be three round trips more.
        return { sql: this.pageOfCandidates(scope, candidates, page), serial: counted > fewCandidates };
      }
      if (!candidates.exact && counted <= fewCandidates) {
        // Several projects, and few candidates that hold more than the
        // matches (`@me and state = done`): each is looked up by its id, in
        // id order (the array is sorted for the scan), and checked.
        const sql = `SELECT c.id FROM cards.cards c
          WHERE c.id = ANY(ARRAY(${candidates.sql(params)}))
            AND ${this.visible(idIn('c.project_id', scope.projectIds, params), scope)}${page.after('c.id')} AND (${where(ROW, params)})
          ORDER BY c.id ${page.limitSql()}`;
        return { sql, serial: false };
      }
    }
    // Several projects (/search): each project's first ids in id order from
    // its own listing index, then merged. One scan of all their cards in id
    // order would walk every other project's cards in between, and a scan
    // of all of them by project would sort every match.
    const sql = `SELECT x.id FROM unnest(${params.add(scope.projectIds, 'bigint[]')}) AS p(project_id)
      CROSS JOIN LATERAL (
        SELECT c.id FROM cards.cards c
         WHERE ${this.visible('c.project_id = p.project_id', scope)}${page.after('c.id')} AND (${where(ROW, params)})
         ORDER BY c.id LIMIT ${params.add(page.offset + page.limit, 'bigint')}) x
      ORDER BY x.id ${page.limitSql()}`;
    return { sql, serial: false };
  }

  /**
   * A page of cards that are exactly a set of candidates, read from the
   * candidates' ids, sorted, each looked up in the card table until the
   * page is full; a card in two of an `or`'s sets folds in the GROUP BY, a
   * streaming step on the sorted ids. Used for every `or` of term sets
   * (`@me or #Tag3`; its other forms read the whole union per project or
   * hashed it), and over several projects for sets of at most
   * `sortedCandidates` ids. Both subqueries are fenced (`OFFSET 0`) so that
   * the plan stays that one:
   * - as `c.id IN (union)` the planner took the union for 200 distinct ids
   *   and hashed all of it (10.5 ms for one project's 11 000, 239 ms for a
   *   25 % column or a label, against 2.9 and 25 ms);
   * - as a join of the sorted ids with the cards over several projects it
   *   merge-joined with `cards_pkey` from the table's first id, walking
   *   every other project's cards (300 ms on the bench);
   * - /search's per-project listing read an `or`'s whole union once per
   *   project (550 ms for two 25 % columns over 50 projects, against 10 ms).
   * Run serially (docs/PERFORMANCE.md, issue 10, twelfth and thirteenth passes).
   */
  private pageOfCandidates(scope: FilterScope, candidates: CandidateSet, page: PageBounds): string {
    const { params } = page;
    return `SELECT u.id FROM (SELECT s.id FROM (${candidates.sql(params)}) s(id) WHERE true${page.after('s.id')} ORDER BY s.id OFFSET 0) u(id)
      CROSS JOIN LATERAL (SELECT 1 FROM cards.cards c
                           WHERE c.id = u.id AND ${this.visible(idIn('c.project_id', scope.projectIds, params), scope)} OFFSET 0) listed
      GROUP BY u.id ORDER BY u.id ${page.limitSql()}`;
  }

  /**
   * How many ids a candidate set holds, counted up to `limit + 1` from its
   * own indexes (duplicates count, which only errs towards the plans for
   * more candidates).
   */
  private async candidatesUpTo(candidates: CandidateSet, limit: number): Promise<number> {
    const params = new SqlParams();
    const sql = `SELECT count(*)::int AS n FROM (${candidates.sql(params)} LIMIT ${limit + 1}) s`;
    const [row] = (await this.uow.manager.query(sql, params.values)) as Array<{ n: string | number }>;
    return Number(row.n);
  }

  async count(scope: FilterScope, where: FilterCondition, fromTermSets = false, candidates?: CandidateSet): Promise<number> {
    if (!scope.projectIds.length) return 0;
    const params = new SqlParams();
    const sql = candidates?.exact ? this.countOfCandidates(scope, candidates, params) : this.countOfCondition(scope, where, params);
    // The planner parallelises the per-match probes of a count from term
    // sets (a Gather over a parallel bitmap scan of the values), which on the
    // bench took 26-32 ms where the serial index-only join takes 11 ms; a
    // count that scans the project's cards (a title word, a state) keeps its
    // workers.
    const serial = fromTermSets && !candidates?.exact;
    const [row] = (serial ? await this.serially(sql, params) : await this.uow.manager.query(sql, params.values)) as Array<{ n: string | number }>;
    return Number(row.n);
  }

  /**
   * Runs a query without parallel workers and without JIT compilation
   * (settings local to a transaction of its own, or the query as it is
   * inside the caller's). Worker start-up is the dearest part of a query
   * that reads a few thousand index entries, and the planner's cost of
   * probing every id of a large union (it cannot see the LIMIT stop the
   * probes) passes the JIT threshold: 15 ms of compiling for a 10 ms page.
   */
  private async serially(sql: string, params: SqlParams): Promise<Array<Record<string, unknown>>> {
    if (this.uow.inTransaction) return this.uow.manager.query(sql, params.values);
    return this.uow.run(async () => {
      await this.uow.manager.query(`SELECT set_config('max_parallel_workers_per_gather', '0', true), set_config('jit', 'off', true)`);
      return this.uow.manager.query(sql, params.values);
    });
  }

  /**
   * The count of a condition that exactly its candidates satisfy (field and
   * group terms, and `or`s of them): the distinct candidates less those the
   * listing leaves out (the top-level card, and archived cards unless asked
   * for), found in `cards_project_unlisted_idx`, which is small. A candidate
   * set holds cards of the scope's projects only (CandidateSet), so no
   * candidate needs looking up in the card table: for the bench's 11 000
   * cards of `@me or #Tag3`, 2 ms instead of 11 000 index probes (15-19 ms).
   */
  private countOfCandidates(scope: FilterScope, candidates: CandidateSet, params: SqlParams): string {
    const unlisted = scope.withArchived ? 'c.depth = 0' : '(c.depth = 0 OR c.hidden)';
    return `SELECT count(DISTINCT u.id)::bigint AS n FROM (${candidates.sql(params)}) u(id)
             WHERE NOT EXISTS (SELECT 1 FROM cards.cards c
                                WHERE c.id = u.id AND ${idIn('c.project_id', scope.projectIds, params)} AND ${unlisted})`;
  }

  private countOfCondition(scope: FilterScope, where: FilterCondition, params: SqlParams): string {
    const projects = this.visible(idIn('c.project_id', scope.projectIds, params), scope);
    return `SELECT count(*)::bigint AS n FROM cards.cards c WHERE ${projects} AND (${where(ROW, params)})`;
  }

  /**
   * The listing's cards of `project` (a condition on `c.project_id`): never
   * the top-level card, and without archived ones unless asked. Written as
   * the partial listing indexes are, so they apply.
   */
  private visible(project: string, scope: FilterScope): string {
    return `${project} AND c.depth > 0${scope.withArchived ? '' : ' AND NOT c.hidden'}`;
  }
}
