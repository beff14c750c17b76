import { describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { answerDeadlineClient, answerDeadlineMs } from './server-pool.js';

/** A client class whose statements never get an answer (a stalled connection), recording what it was sent. */
function stalledClient(sent: string[]): typeof pg.Client {
  class Stalled extends pg.Client {}
  (Stalled.prototype as unknown as { query: (text: string) => Promise<never> }).query = function (text: string) {
    sent.push(text);
    return new Promise<never>(() => undefined);
  };
  return Stalled;
}

describe('answerDeadlineMs', () => {
  it('is the statement timeout plus 5 s, or 10 minutes when requests have none', () => {
    expect(answerDeadlineMs(60_000)).toBe(65_000);
    expect(answerDeadlineMs(400)).toBe(5_400);
    expect(answerDeadlineMs(0)).toBe(600_000);
  });
});

describe('answerDeadlineClient', () => {
  const destroyed = (client: pg.Client) => {
    const state = { destroyed: 0 };
    (client as unknown as { connection: { stream: { destroy(): void } } }).connection.stream = { destroy: () => state.destroyed++ } as never;
    return state;
  };
  const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  it('closes the connection of a statement not answered in time', async () => {
    const sent: string[] = [];
    const client = new (answerDeadlineClient(stalledClient(sent), 30))();
    const state = destroyed(client);
    void client.query('SELECT 1');
    await tick(80);
    expect(state.destroyed).toBe(1);
  });

  it('waits without a deadline in a transaction that lifted its statement timeout, until it ends', async () => {
    const sent: string[] = [];
    const client = new (answerDeadlineClient(stalledClient(sent), 30))();
    const state = destroyed(client);
    void client.query('SET LOCAL statement_timeout = 0');
    void client.query('DELETE FROM workspace.projects WHERE id = $1');
    await tick(80);
    expect(state.destroyed).toBe(0);
    void client.query('ROLLBACK TO SAVEPOINT s');
    await tick(80);
    expect(state.destroyed).toBe(0);
    void client.query('COMMIT');
    await tick(80);
    expect(state.destroyed).toBe(1);
    expect(sent).toHaveLength(4);
  });
});
