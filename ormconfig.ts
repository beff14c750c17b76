// For the TypeORM CLI (e.g. `npx typeorm migration:show -d dist/ormconfig.js`): the same
// connection the app uses, from the same environment variables.
import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { loadConfig } from './src/config/app-config.js';
import { dataSourceOptions } from './src/database/data-source.js';

// Migrations run without the requests' statement timeout, as `cardwork migrate` does.
export default new DataSource({ ...dataSourceOptions(loadConfig(), undefined, 'migrations'), migrationsRun: false });
