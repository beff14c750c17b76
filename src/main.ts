import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { ConfigError, loadConfig } from './config/app-config.js';
import { claimEmbedded } from './database/embedded-lock.js';
import { createApp } from './app.factory.js';

async function bootstrap(): Promise<void> {
  const config = loadConfig();
  const release = config.embedded ? claimEmbedded(config.dataDir) : () => undefined;
  process.once('exit', release);
  const app = await createApp(config);
  await app.listen(config.port, config.host);
  // Graceful shutdown: stop accepting, finish in-flight requests, close the
  // database (PGlite flushes to disk), free the data directory, exit 0.
  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    new Logger('cardwork').log(`${signal} received, shutting down`);
    app
      .close()
      .then(() => process.exit(0))
      .catch(() => process.exit(1));
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
  new Logger('cardwork').log(
    `listening on http://${config.host}:${config.port}/api/1.0 (${config.embedded ? `embedded database in ${config.dataDir}` : 'PostgreSQL'})`,
  );
}

bootstrap().catch((error: unknown) => {
  // Configuration and start-up problems get one clear line, not a stack.
  const message = error instanceof ConfigError || error instanceof Error ? error.message : String(error);
  console.error(`cardwork failed to start: ${message}`);
  process.exit(1);
});
