import pg from 'pg';

/**
 * Named prepared statements for the hot paths (docs/PERFORMANCE.md, issue 15).
 *
 * `pg` sends every statement unnamed: PostgreSQL parses and plans it on every
 * call, which for the statements of a card creation cost more of the
 * database's CPU than executing them. A repository marks a statement whose
 * text is fixed with `prepared(sql)`; the pool's connections (`PreparingClient`)
 * then send that text under a name, so each connection parses and plans it once
 * and later calls only bind and execute. Everything else — TypeORM's own
 * statements, texts built per request such as filters — stays unnamed, so that
 * a plan is never cached for a question whose best plan depends on its values.
 *
 * Marking is a no-op on the embedded database (PGlite does not use this client)
 * and when DATABASE_PREPARED_STATEMENTS=false (for poolers in transaction mode
 * that cannot carry named statements).
 */

/** Text → statement name. Process-wide; each connection prepares a name on first use. */
const names = new Map<string, string>();

/**
 * More distinct texts than this means a caller marks texts built from values:
 * further texts are sent unnamed rather than growing every connection's
 * statement cache without bound.
 */
const MAX_PREPARED = 256;

/** Marks `sql` to be sent as a named prepared statement; returns it unchanged. */
export function prepared(sql: string): string {
  if (!names.has(sql) && names.size < MAX_PREPARED) names.set(sql, `cw_${names.size + 1}`);
  return sql;
}

/** The name `sql` is prepared under, if it was marked. */
export function preparedName(sql: string): string | undefined {
  return names.get(sql);
}

type AnyQuery = (this: pg.Client, config: unknown, ...rest: unknown[]) => unknown;
const plainQuery = pg.Client.prototype.query as AnyQuery;

/**
 * A `pg.Client` class that sends a text under the name `nameOf` gives it (a
 * named statement), and a text without one unnamed. `pg` itself remembers,
 * per connection, which names it has already parsed.
 */
export function namingClient(nameOf: (text: string) => string | undefined): typeof pg.Client {
  class NamingClient extends pg.Client {}
  // Assigned rather than declared: `query` has a dozen overloads, and this one
  // only renames the statement before handing every form on unchanged.
  (NamingClient.prototype as unknown as { query: AnyQuery }).query = function query(config, ...rest) {
    const name = typeof config === 'string' ? nameOf(config) : undefined;
    return plainQuery.call(this, name === undefined ? config : { name, text: config }, ...rest);
  };
  return NamingClient;
}

/** The pool's `Client`: marked texts go out named. */
export const PreparingClient = namingClient(preparedName);
