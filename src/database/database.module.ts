import { DynamicModule, Global, Logger, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { AppConfig } from '../config/app-config.js';
import { dataSourceOptions } from './data-source.js';
import { EmbeddedUpkeep } from './embedded-upkeep.js';
import { applyMigrations } from './migrate.js';
import { DatabaseReadiness } from './readiness.js';

/** The start says which migrations it applied, in one line; none, nothing. */
function logApplied(names: string[]): void {
  if (names.length) new Logger('Database').log({ msg: `applied ${names.length} migration(s): ${names.join(', ')}`, migrations: names });
}

/**
 * The app's data source. On the embedded database it applies the pending
 * migrations itself (`migrationsRun`: one connection, no statement timeout),
 * after it opened rather than inside `initialize`, to learn which it applied.
 */
async function openDataSource(options: DataSourceOptions): Promise<DataSource> {
  const ds = await new DataSource({ ...options, migrationsRun: false }).initialize();
  if (!options.migrationsRun) return ds;
  try {
    logApplied((await ds.runMigrations({ transaction: 'each' })).map((m) => m.name));
  } catch (error) {
    // As `initialize` does when its migrations fail.
    await ds.destroy();
    throw error;
  }
  return ds;
}

@Global()
@Module({})
export class DatabaseModule {
  static forRoot(embeddedDir?: string): DynamicModule {
    return {
      module: DatabaseModule,
      imports: [
        TypeOrmModule.forRootAsync({
          inject: [AppConfig],
          useFactory: async (config: AppConfig) => {
            // On PostgreSQL, pending migrations are applied before the pool opens, on a
            // connection without the requests' statement timeout (the embedded data
            // source applies them itself: dataSourceOptions, openDataSource).
            if (!config.embedded && config.migrationsRun) logApplied(await applyMigrations(config));
            return { ...dataSourceOptions(config, embeddedDir), autoLoadEntities: true };
          },
          dataSourceFactory: async (options) => openDataSource(options!),
        }),
      ],
      providers: [EmbeddedUpkeep, DatabaseReadiness],
      exports: [EmbeddedUpkeep, DatabaseReadiness],
    };
  }
}
