import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The position a new last child of `parent` takes: the highest sibling
 * position + 1 (positions are dense, so the children's count).
 *
 * Why a function: a card creation locks its parent and inserts in ONE
 * statement (`insertChildChecked`). A plain subquery there would read the
 * siblings in the statement's snapshot, taken before the parent's lock was
 * granted, and miss a sibling that a concurrent creation committed while
 * this one waited: two cards at one position. A VOLATILE function takes a
 * fresh snapshot for its query (READ COMMITTED), and its argument is the
 * locked parent row, so it runs after the lock is held and sees every
 * sibling. Not inlined by the planner: its body reads a table.
 */
export class CardsNextChildPosition1795620000000 implements MigrationInterface {
  name = 'CardsNextChildPosition1795620000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE FUNCTION cards.next_child_position(parent bigint) RETURNS integer
         LANGUAGE sql VOLATILE
         AS $$ SELECT coalesce(max(position) + 1, 0)::int FROM cards.cards WHERE parent_id = parent $$`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION IF EXISTS cards.next_child_position(bigint)`);
  }
}
