import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config.js';
import { databaseWarnings } from './start-checks.js';

/** Longest a readiness probe waits for the database: a probe that hangs tells its caller nothing. */
export const READINESS_DEADLINE_MS = 2_000;

/** A standby, a demoted primary, or a database set read-only (a managed one whose storage filled up) takes no writes. */
const READINESS_SQL = `SELECT pg_is_in_recovery() OR current_setting('transaction_read_only') = 'on' AS read_only`;

/** One probe: whether its caller gave up (the deadline passed), and the connection it is on. */
interface Attempt {
  late: boolean;
  using?: Promise<pg.Client>;
}

/**
 * Whether the database can serve the app's requests, for `/ready`. On a
 * PostgreSQL server the probe runs on a connection of its own, outside the
 * requests' pool: a pool whose every connection is lent is a busy instance
 * (its requests get SERVICE.BUSY and retry), not one to take out of a load
 * balancer, which would push its load onto the others. The probe gives up
 * after `READINESS_DEADLINE_MS` (a stalled connection is closed and opened
 * afresh at the next probe). The connection is kept between probes, so one
 * that died meanwhile (PostgreSQL restarted or failed over, a proxy or NAT
 * dropped it idle) must not fail the next probe: it is dropped as soon as it
 * says so ('error', 'end'), and a probe failing on a kept connection is tried
 * once more on a fresh one within the same deadline. The embedded database is
 * probed as before, through its one connection: no deadline, it answers
 * in-process.
 */
@Injectable()
export class DatabaseReadiness implements OnApplicationBootstrap, OnApplicationShutdown {
  private probe?: Promise<pg.Client>;

  constructor(
    private readonly dataSource: DataSource,
    private readonly config: AppConfig,
  ) {}

  /** What serves less well on this PostgreSQL database (start-checks.ts), one `warn` line each, once the migrations ran. */
  async onApplicationBootstrap(): Promise<void> {
    if (this.config.embedded) return;
    const logger = new Logger('Database');
    let warnings: string[];
    try {
      warnings = await databaseWarnings((sql) => this.dataSource.query(sql));
    } catch (error) {
      // Advice, not a condition of serving: a database that blinked at this moment must not stop the start.
      logger.warn(`could not check the database's settings at start (${error instanceof Error ? error.message : String(error)})`);
      return;
    }
    for (const warning of warnings) logger.warn(warning);
  }

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
    const attempt: Attempt = { late: false };
    const deadline = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), READINESS_DEADLINE_MS)));
    try {
      const answer = await Promise.race([this.readOnly(attempt), deadline]);
      if (answer === 'late') {
        attempt.late = true;
        this.drop(attempt.using);
        return `The database did not answer within ${READINESS_DEADLINE_MS} ms`;
      }
      return answer ? 'The database is read-only (a standby, or set read-only): it takes no writes' : undefined;
    } catch (error) {
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

  /** The probe's answer; a kept connection that fails is dropped and a fresh one tried, unless the caller gave up. */
  private async readOnly(attempt: Attempt): Promise<boolean> {
    const kept = this.probe !== undefined;
    try {
      return await this.ask(attempt);
    } catch (error) {
      this.drop(attempt.using);
      if (!kept || attempt.late) throw error;
      // It died unseen (a proxy that forgot it says so only once written to): a fresh one tells.
      try {
        return await this.ask(attempt);
      } catch (again) {
        this.drop(attempt.using);
        throw again;
      }
    }
  }

  private async ask(attempt: Attempt): Promise<boolean> {
    attempt.using = this.connection();
    const client = await attempt.using;
    const { rows } = await client.query<{ read_only: boolean }>(READINESS_SQL);
    return rows[0].read_only;
  }

  /** The probe's connection, opened at the first probe and after one was dropped. */
  private connection(): Promise<pg.Client> {
    if (this.probe) return this.probe;
    const client = new pg.Client({ connectionString: this.config.databaseUrl, connectionTimeoutMillis: READINESS_DEADLINE_MS, keepAlive: true });
    const probe = client.connect().then(() => client);
    // A connection that breaks between probes is dropped at once: the next probe opens another.
    client.on('error', () => this.drop(probe));
    client.on('end', () => this.drop(probe));
    this.probe = probe;
    return probe;
  }

  /** Closes a probe's connection, whatever state it is in, and forgets it if it is still the kept one. */
  private drop(probe: Promise<pg.Client> | undefined): void {
    if (this.probe === probe) this.probe = undefined;
    void probe?.then(
      (client) => (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy(),
      () => undefined,
    );
  }
}
