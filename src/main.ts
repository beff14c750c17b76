import 'reflect-metadata';
import path from 'node:path';
import { DataSource } from 'typeorm';
import { ConfigError, loadConfig } from './config/app-config.js';
import { claimEmbedded } from './database/embedded-lock.js';
import { createApp } from './app.factory.js';
import { drainAndExit } from './lifecycle/graceful-shutdown.js';
import { applyHeapGrowth, keepRequestsYoung } from './lifecycle/heap-growth.js';
import { createRootLogger, PinoNestLogger } from './observability/logging.js';
import { Metrics } from './observability/metrics.js';
import { refuseNewerDatabase, refusePendingMigrations } from './database/pending-migrations.js';
import { startWait, waitForDatabase } from './database/database-wait.js';
import { embeddedDataDir } from './database/data-source.js';
import { openEmbedded } from './database/embedded-driver.js';
import { DiskFileStorage } from './modules/fields/files/infrastructure/file-storage.js';

/** Signals this close to the first are the same stop, delivered twice (see the handlers below). */
const SAME_STOP_MS = 1_000;

async function bootstrap(): Promise<void> {
  const config = loadConfig();
  applyHeapGrowth(config.heapGrowingPercent);
  keepRequestsYoung();
  const root = createRootLogger(config.logLevel);
  const logger = new PinoNestLogger(root);
  // A DATA_DIR the server cannot write (read-only, permissions) is refused before anything is written there;
  // a full one is a warning: only uploads need the space, and they answer 503 until it is freed.
  const storageFull = await new DiskFileStorage(path.join(config.dataDir, 'files')).checkWritable();
  if (storageFull) logger.warn(storageFull, 'FileStorage');
  const release = config.embedded ? claimEmbedded(config.dataDir) : () => undefined;
  process.once('exit', release);
  const metrics = config.metricsPort !== undefined ? new Metrics() : undefined;
  // Before Nest: a database it cannot reach (or an embedded one that cannot
  // open: a full disk) would end the process from Nest's ExceptionHandler (a
  // stack), before the catch below could say it in a line.
  if (!config.embedded) await waitForDatabase(config.databaseUrl!, (message) => logger.warn(message, 'Database'), startWait(config.databaseStartWaitMs));
  else await openEmbedded(embeddedDataDir(config));
  // A database a newer build migrated is refused before the app (and its start-up sweeps) runs on it.
  const unknownMigrations = await refuseNewerDatabase(config);
  if (unknownMigrations) logger.warn(unknownMigrations, 'Database');
  const app = await createApp(config, { rootLogger: root, logger, metrics });
  if (!config.migrationsRun) await refusePendingMigrations(app.get(DataSource));
  // The metrics listener first: a port it cannot take stops the start before the API serves.
  const metricsServer = metrics
    ? await listening('METRICS_HOST, METRICS_PORT', config.metricsHost, config.metricsPort!, metrics.listen(config.metricsPort!, config.metricsHost))
    : undefined;
  await listening('HOST, PORT', config.host, config.port, app.listen(config.port, config.host));
  // Drain on SIGTERM/SIGINT (DESIGN.md §1): the database closes last, so
  // PGlite flushes to disk and the data directory is freed.
  // A second signal while draining stops at once (the deadline's cut), unless
  // it came within SAME_STOP_MS of the first: one stop delivered twice (Ctrl-C
  // reaches node from the terminal and again from `npm start`, which forwards
  // it; a process-group kill signals both).
  let stopNow: ((signal: string) => void) | undefined;
  let firstAt = 0;
  const shutdown = (signal: string) => {
    if (stopNow) return Date.now() - firstAt < SAME_STOP_MS ? undefined : stopNow(signal);
    firstAt = Date.now();
    metricsServer?.close();
    stopNow = drainAndExit(app, config.shutdownGraceMs, logger, signal);
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  logger.log(
    `listening on http://${config.host}:${config.port}/api/1.0 (${config.embedded ? `embedded database in ${config.dataDir}` : 'PostgreSQL'})` +
      (metricsServer ? `; metrics on http://${config.metricsHost}:${config.metricsPort}/metrics` : ''),
    'cardwork',
  );
}

/** A listener's start; an address it cannot take (in use, not resolvable) is an error naming the settings. */
async function listening<T>(settings: string, host: string, port: number, started: Promise<T>): Promise<T> {
  try {
    return await started;
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new Error(`cannot listen on ${host}:${port} (${settings}): ${why}`);
  }
}

bootstrap().catch((error: unknown) => {
  // Configuration and start-up problems get one clear line, not a stack.
  const message = error instanceof ConfigError || error instanceof Error ? error.message : String(error);
  console.error(`cardwork failed to start: ${message}`);
  process.exit(1);
});
