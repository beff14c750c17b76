import { DynamicModule, Module } from '@nestjs/common';
import type { AppConfig } from '../config/app-config.js';
import { DatabaseModule } from '../database/database.module.js';
import { IdentityAdminModule } from '../modules/identity/index.js';
import { SharedModule } from '../shared/shared.module.js';

/** What the CLI needs: the database and identity administration, no HTTP. */
@Module({})
export class CliModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: CliModule,
      imports: [SharedModule.forRoot(config), DatabaseModule.forRoot(), IdentityAdminModule],
    };
  }
}
