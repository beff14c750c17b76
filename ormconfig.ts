// For the TypeORM CLI (e.g. `npx typeorm migration:show -d dist/ormconfig.js`): the same
// connection the app uses, from the same environment variables.
import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { loadConfig } from './src/config/app-config.js';
import { dataSourceOptions } from './src/database/data-source.js';
import { migrationsTable } from './src/database/migrations-table.js';

const config = loadConfig();

/**
 * The CLI's data source finds the migrations table where the app keeps it
 * (src/database/migrations-table.ts), not in whatever schema the DBA's
 * `search_path` puts first: `migration:revert` under a role named after one
 * of the app's schemas would otherwise read an empty table there.
 */
class CliDataSource extends DataSource {
  override async initialize(): Promise<this> {
    await super.initialize();
    if (!config.embedded) this.setOptions({ schema: (await migrationsTable((sql) => this.query(sql))).schema });
    return this;
  }
}

// Migrations run without the requests' statement timeout, as `cardwork migrate` does.
export default new CliDataSource({ ...dataSourceOptions(config, undefined, 'migrations'), migrationsRun: false });
