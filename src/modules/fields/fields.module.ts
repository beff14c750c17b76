import path from 'node:path';
import { Module } from '@nestjs/common';
import { AppConfig } from '../../config/app-config.js';
import { CardHierarchyModule } from '../card-hierarchy/index.js';
import { IdentityModule } from '../identity/index.js';
import { WorkspaceModule } from '../workspace/index.js';
import { FieldDefinitionsService } from './application/field-definitions.service.js';
import { FieldsApiImpl } from './application/fields.api-impl.js';
import { FileBlobs } from './application/file-blobs.service.js';
import { GroupTypeBridge } from './application/group-type-bridge.js';
import { FieldsProjectLifecycleHandler } from './application/project-lifecycle.handler.js';
import { FieldsApi } from './contracts/fields.api.js';
import { FieldDefinitionsRepository } from './infrastructure/field-definitions.repository.js';
import { FieldValuesRepository } from './infrastructure/field-values.repository.js';
import { DiskFileStorage, FileStorage } from './infrastructure/file-storage.js';

@Module({
  imports: [IdentityModule, WorkspaceModule, CardHierarchyModule],
  providers: [
    FieldDefinitionsRepository,
    FieldValuesRepository,
    { provide: FileStorage, useFactory: (config: AppConfig) => new DiskFileStorage(path.join(config.dataDir, 'files')), inject: [AppConfig] },
    FileBlobs,
    GroupTypeBridge,
    FieldDefinitionsService,
    FieldsProjectLifecycleHandler,
    { provide: FieldsApi, useClass: FieldsApiImpl },
  ],
  exports: [FieldsApi],
})
export class FieldsModule {}
