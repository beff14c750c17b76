import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import type { AppConfig } from './config/app-config.js';
import { DatabaseModule } from './database/database.module.js';
import { HealthController } from './health.controller.js';
import { CardHierarchyModule } from './modules/card-hierarchy/index.js';
import { CardsModule } from './modules/cards/index.js';
import { FieldsModule } from './modules/fields/index.js';
import { GroupingModule } from './modules/grouping/index.js';
import { IdentityModule } from './modules/identity/index.js';
import { ImportModule } from './modules/import/index.js';
import { WebModule } from './modules/web/index.js';
import { WorkspaceModule } from './modules/workspace/index.js';
import { ProblemDetailsFilter } from './shared/http/problem-details.filter.js';
import { SharedModule } from './shared/shared.module.js';

export interface AppModuleOptions {
  /** Embedded database location override (tests use `memory://`). */
  embeddedDir?: string;
}

@Module({})
export class AppModule {
  static forRoot(config: AppConfig, options: AppModuleOptions = {}): DynamicModule {
    return {
      module: AppModule,
      imports: [
        SharedModule.forRoot(config),
        DatabaseModule.forRoot(options.embeddedDir),
        IdentityModule,
        WorkspaceModule,
        CardHierarchyModule,
        FieldsModule,
        GroupingModule,
        CardsModule,
        ImportModule,
        WebModule,
      ],
      controllers: [HealthController],
      providers: [{ provide: APP_FILTER, useClass: ProblemDetailsFilter }],
    };
  }
}
