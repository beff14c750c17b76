import { DynamicModule, Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AppConfig } from '../config/app-config.js';
import { dataSourceOptions } from './data-source.js';

@Global()
@Module({})
export class DatabaseModule {
  static forRoot(embeddedDir?: string): DynamicModule {
    return {
      module: DatabaseModule,
      imports: [
        TypeOrmModule.forRootAsync({
          inject: [AppConfig],
          useFactory: (config: AppConfig) => ({ ...dataSourceOptions(config, embeddedDir), autoLoadEntities: true }),
        }),
      ],
    };
  }
}
