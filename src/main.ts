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
