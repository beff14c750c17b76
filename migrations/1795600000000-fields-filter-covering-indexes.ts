import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The filter's count of a field term (`Estimate >= 99`, `@me`) reads the
 * matching values' card ids from the index alone (docs/PERFORMANCE.md
 * "Filters"): the index-only scan needs no visit to the values' heap pages,
 * which for 10 000 scattered numbers was most of a 25 ms count.
 *
 * - `scalar_values_number_idx` carries `card_id` (INCLUDE): the range of a
 *   field's numbers gives the cards without reading the rows.
 * - `member_values_user_idx` becomes `(user_id, attribute_id, card_id)`: a
 *   user's values of given members fields, the cards in id order. Its
 *   leading `user_id` still serves the delete of a user (the foreign key).
 */
export class FieldsFilterCoveringIndexes1795600000000 implements MigrationInterface {
  name = 'FieldsFilterCoveringIndexes1795600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX fields.scalar_values_number_idx`);
    await q.query(
      `CREATE INDEX scalar_values_number_idx ON fields.scalar_values (attribute_id, value) INCLUDE (card_id)
        WHERE jsonb_typeof(value) = 'number'`,
    );
    await q.query(`DROP INDEX fields.member_values_user_idx`);
    await q.query(`CREATE INDEX member_values_user_idx ON fields.member_values (user_id, attribute_id, card_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX fields.member_values_user_idx`);
    await q.query(`CREATE INDEX member_values_user_idx ON fields.member_values (user_id)`);
    await q.query(`DROP INDEX fields.scalar_values_number_idx`);
    await q.query(
      `CREATE INDEX scalar_values_number_idx ON fields.scalar_values (attribute_id, value) WHERE jsonb_typeof(value) = 'number'`,
    );
  }
}
