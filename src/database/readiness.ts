import { Injectable, type OnApplicationShutdown } from '@nestjs/common';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config.js';

/** Longest a readiness probe waits for the database: a probe that hangs tells its caller nothing. */
export const READINESS_DEADLINE_MS = 2_000;

/** A standby, a demoted primary, or a database set read-only (a managed one whose storage filled up) takes no writes. */
const READINESS_SQL = `SELECT pg_is_in_recovery() OR current_setting('transaction_read_only') = 'on' AS read_only`;

/**
 * Whether the database can serve the app's requests, for `/ready`. On a
 * PostgreSQL server the probe runs on a connection of its own, outside the
 * requests' pool: a pool whose every connection is lent is a busy instance
 * (its requests get SERVICE.BUSY and retry), not one to take out of a load
 * balancer, which would push its load onto the others. The probe gives up
 * after `READINESS_DEADLINE_MS` (a stalled connection is closed and opened
 * afresh at the next probe). The embedded database is probed as before,
 * through its one connection: no deadline, it answers in-process.
 */
@Injectable()
export class DatabaseReadiness implements OnApplicationShutdown {
  private probe?: Promise<pg.Client>;

  constructor(
    private readonly dataSource: DataSource,
    private readonly config: AppConfig,
  ) {}

  /** Why the database cannot serve now, or undefined when it can. */
  async unready(): Promise<string | undefined> {
    if (this.config.embedded) {
      try {
        await this.dataSource.query('SELECT 1');
        return undefined;
      } catch {
        return 'The database is not reachable';
      }
    }
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), READINESS_DEADLINE_MS)));
    try {
      const answer = await Promise.race([this.readOnly(), deadline]);
      if (answer === 'late') {
        this.drop();
        return `The database did not answer within ${READINESS_DEADLINE_MS} ms`;
      }
      return answer ? 'The database is read-only (a standby, or set read-only): it takes no writes' : undefined;
    } catch (error) {
      this.drop();
      return `The database is not reachable: ${(error as Error).message}`;
    } finally {
      clearTimeout(timer);
    }
  }

  async onApplicationShutdown(): Promise<void> {
    const probe = this.probe;
    this.probe = undefined;
    await probe?.then((client) => client.end()).catch(() => undefined);
  }

  private async readOnly(): Promise<boolean> {
    const client = await this.connection();
    const { rows } = await client.query<{ read_only: boolean }>(READINESS_SQL);
    return rows[0].read_only;
  }

  /** The probe's connection, opened at the first probe and after one was dropped. */
  private connection(): Promise<pg.Client> {
    this.probe ??= (async () => {
      const client = new pg.Client({ connectionString: this.config.databaseUrl, connectionTimeoutMillis: READINESS_DEADLINE_MS, keepAlive: true });
      // A connection that breaks between probes is dropped at the next one (its query fails).
      client.on('error', () => undefined);
      await client.connect();
      return client;
    })();
    return this.probe;
  }

  /** Closes the probe's connection, whatever state it is in; the next probe opens another. */
  private drop(): void {
    const probe = this.probe;
    this.probe = undefined;
    void probe?.then(
      (client) => (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy(),
      () => undefined,
    );
  }
}
