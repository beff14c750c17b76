import { FieldFilterApi } from './contracts/field-filter.api.js';
import { FieldFilterSql } from './infrastructure/field-filter.sql.js';
import path from 'node:path';
import { Module } from '@nestjs/common';
import { AppConfig } from '../../config/app-config.js';
import { CardHierarchyModule } from '../card-hierarchy/index.js';
import { IdentityModule } from '../identity/index.js';
import { WorkspaceModule } from '../workspace/index.js';
import { AttributeValuesReader } from './application/attribute-values.reader.js';
import { CardModelService } from './application/card-model.service.js';
import { ValuePlanCache } from './application/value-plan.cache.js';
import { CardValuesService } from './application/card-values.service.js';
import { DeletedTargetsService } from './application/deleted-targets.service.js';
import { BulkListWriter } from './application/list-values.bulk-writer.js';
import { TeamReferences } from './application/team-references.js';
import { FieldChoicesService } from './application/field-choices.service.js';
import { FieldDefinitionsService } from './application/field-definitions.service.js';
import { FieldsApiImpl } from './application/fields.api-impl.js';
import { FileBlobs } from './files/application/file-blobs.service.js';
import { FileDownloadsService } from './files/application/file-downloads.service.js';
import { FileInputs, FileUrlPolicy } from './files/application/file-inputs.service.js';
import { FieldsProjectDeletedHandler } from './application/project-deleted.handler.js';
import { FieldsApi } from './contracts/fields.api.js';
import { FieldDefinitionsController, ModelsController } from './http/field-definitions.controller.js';
import { FilesController } from './files/http/files.controller.js';
import { FieldDefinitionsRepository } from './infrastructure/field-definitions.repository.js';
import { FieldValuesRepository } from './infrastructure/field-values.repository.js';
import { RelationshipReferencesRepository } from './infrastructure/relationship-references.repository.js';
import { DiskFileStorage, FileStorage } from './files/infrastructure/file-storage.js';

@Module({
  imports: [IdentityModule, WorkspaceModule, CardHierarchyModule],
  controllers: [FieldDefinitionsController, ModelsController, FilesController],
  providers: [
    FieldDefinitionsRepository,
    FieldValuesRepository,
    RelationshipReferencesRepository,
    {
      provide: FileStorage,
      useFactory: (config: AppConfig) => new DiskFileStorage(path.join(config.dataDir, 'files')),
      inject: [AppConfig],
    },
    FileBlobs,
    FileUrlPolicy,
    FileInputs,
    AttributeValuesReader,
    FieldDefinitionsService,
    TeamReferences,
    BulkListWriter,
    CardValuesService,
    DeletedTargetsService,
    ValuePlanCache,
    CardModelService,
    FieldChoicesService,
    FileDownloadsService,
    FieldsProjectDeletedHandler,
    { provide: FieldsApi, useClass: FieldsApiImpl },
    { provide: FieldFilterApi, useClass: FieldFilterSql },
  ],
  exports: [FieldsApi, FieldFilterApi],
})
export class FieldsModule {}
