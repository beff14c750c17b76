import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource, type QueryRunner } from 'typeorm';
import { CardsTeamCardsIndex1763769600500 } from '../../../migrations/1763769600500-cards-team-cards-index.js';
import { createTestApp, type TestApp } from '../../support/test-app.js';

describe('cards team-cards index migration', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('goes down and comes back up', async () => {
    const db = t.app.get(DataSource);
    const runner = { query: (sql: string, params?: unknown[]) => db.query(sql, params) } as unknown as QueryRunner;
    const present = async () => {
      const [row] = await db.query(`SELECT to_regclass('cards.cards_team_visible_idx') IS NOT NULL AS present`);
      return row.present as boolean;
    };
    const migration = new CardsTeamCardsIndex1763769600500();
    expect(await present()).toBe(true);
    await migration.down(runner);
    expect(await present()).toBe(false);
    await migration.up(runner);
    expect(await present()).toBe(true);
  });
});
