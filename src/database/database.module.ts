import { DynamicModule, Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AppConfig } from '../config/app-config.js';
import { dataSourceOptions } from './data-source.js';
import { EmbeddedStatistics } from './embedded-statistics.js';
import { applyMigrations } from './migrate.js';
import { DatabaseReadiness } from './readiness.js';

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
            // source applies them itself: dataSourceOptions).
            if (!config.embedded && config.migrationsRun) await applyMigrations(config);
            return { ...dataSourceOptions(config, embeddedDir), autoLoadEntities: true };
          },
        }),
      ],
      providers: [EmbeddedStatistics, DatabaseReadiness],
      exports: [EmbeddedStatistics, DatabaseReadiness],
    };
  }
}
