import { DynamicModule, Global, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { AppConfig } from '../config/app-config.js';
import { EventBus } from './events/event-bus.js';
import { DrainState } from './http/draining.js';
import { Sql } from './persistence/sql.js';
import { UnitOfWork } from './persistence/unit-of-work.js';
import { UploadMemoryBudget } from './upload-memory.js';

/** The shared kernel's providers, visible to every module. */
@Global()
@Module({})
export class SharedModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: SharedModule,
      imports: [DiscoveryModule],
      providers: [
        { provide: AppConfig, useValue: config },
        { provide: UploadMemoryBudget, useValue: new UploadMemoryBudget(config.uploadMemoryMaxBytes, config.uploadMemoryUserMaxBytes) },
        UnitOfWork,
        Sql,
        EventBus,
        DrainState,
      ],
      exports: [AppConfig, UploadMemoryBudget, UnitOfWork, Sql, EventBus, DrainState],
    };
  }
}
