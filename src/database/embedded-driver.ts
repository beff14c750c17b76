import { types } from '@electric-sql/pglite';
import { PGliteDriver } from 'typeorm-pglite';

type Done = (err?: unknown) => void;
type ConnectCallback = (err: unknown, client: unknown, done: Done) => void;
interface PoolLike {
  connect(cb: ConnectCallback): Promise<void>;
}
type PoolClass = new (...args: unknown[]) => PoolLike;

/**
 * PGlite is one connection. typeorm-pglite hands that same connection to every
 * query runner at once, so two transactions would interleave their statements.
 * This pool lends the connection to one query runner at a time (like `pg.Pool`
 * with `max: 1`), which keeps transactions isolated on the embedded database.
 */
export function embeddedDriver(dataDir: string | undefined): { Pool: PoolClass } {
  // Ids are bigint; like `parseInt8` on pg, read them as JS numbers (safe below 2^53).
  const parsers = { [types.INT8]: (v: string) => Number(v) };
  const Base = (new PGliteDriver({ ...(dataDir ? { dataDir } : {}), parsers }).driver as unknown as { Pool: PoolClass }).Pool;
  let tail: Promise<void> = Promise.resolve();

  class SerializedPool extends Base {
    override connect(cb: ConnectCallback): Promise<void> {
      let release!: () => void;
      const turn = new Promise<void>((resolve) => (release = resolve));
      const previous = tail;
      tail = previous.then(() => turn);
      return previous.then(() =>
        super.connect((err, client, done) => {
          let released = false;
          const finish: Done = (e) => {
            if (released) return;
            released = true;
            done(e);
            release();
          };
          if (err) finish(err);
          cb(err, client, finish);
        }),
      );
    }
  }
  return { Pool: SerializedPool };
}
