import { Injectable } from '@nestjs/common';
import { Sql, toId } from '../../../shared/persistence/sql.js';

/**
 * SQL of a project's step-1 locks: its cards by `project_id`
 * (`cards_ref_key (project_id, ref)`), not as its top-level card's subtree
 * (the ancestors' GIN index, and the tree lock's columns), which took 1 to
 * 1.4 s instead of 0.2 s for a project of 200 000 cards.
 */
@Injectable()
export class ProjectCardLockQueries {
  constructor(private readonly sql: Sql) {}

  /** The project's cards FOR UPDATE in ascending id (those of its cards the statement's snapshot sees); their ids, ascending. */
  async lockAll(projectId: number): Promise<number[]> {
    const rows = await this.sql.rows<{ id: number | string }>(
      `SELECT id FROM cards.cards WHERE project_id = $1 ORDER BY id FOR UPDATE`,
      [projectId],
    );
    return rows.map((r) => toId(r.id));
  }

  /** How many cards the project has now. */
  async count(projectId: number): Promise<number> {
    const [row] = await this.sql.rows<{ n: number | string }>(`SELECT count(*) AS n FROM cards.cards WHERE project_id = $1`, [projectId]);
    return Number(row.n);
  }

  /** The ids of the project's cards now that are not among `held`, ascending, without locking them. */
  async othersThan(projectId: number, held: number[]): Promise<number[]> {
    const rows = await this.sql.rows<{ id: number | string }>(
      `SELECT c.id FROM cards.cards c
        WHERE c.project_id = $1 AND NOT EXISTS (SELECT 1 FROM unnest($2::bigint[]) AS h(id) WHERE h.id = c.id)
        ORDER BY c.id`,
      [projectId, held],
    );
    return rows.map((r) => toId(r.id));
  }
}
