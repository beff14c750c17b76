import { Module } from '@nestjs/common';
import { AppConfig } from '../../config/app-config.js';
import { CardHierarchyModule } from '../card-hierarchy/index.js';
import { CardsModule } from '../cards/index.js';
import { FieldsModule } from '../fields/index.js';
import { GroupingModule } from '../grouping/index.js';
import { WorkspaceModule } from '../workspace/index.js';
import { DeleteUploadService } from './application/delete-upload.service.js';
import { DiscoverSpreadsheetService } from './application/discover-spreadsheet.service.js';
import { ImportSpreadsheetService } from './application/import-spreadsheet.service.js';
import { UploadCleanup } from './application/upload-cleanup.service.js';
import { SpreadsheetImportController, SpreadsheetUploadInterceptor } from './http/spreadsheet-import.controller.js';
import { ProjectImportLock } from './infrastructure/project-import-lock.js';
import { SheetSandbox } from './infrastructure/sheet-sandbox.js';
import { UploadsRepository } from './infrastructure/uploads.repository.js';

/** The spreadsheet importer (DESIGN.md §8). */
@Module({
  imports: [WorkspaceModule, CardHierarchyModule, FieldsModule, GroupingModule, CardsModule],
  controllers: [SpreadsheetImportController],
  providers: [
    UploadsRepository,
    ProjectImportLock,
    UploadCleanup,
    DiscoverSpreadsheetService,
    DeleteUploadService,
    ImportSpreadsheetService,
    SpreadsheetUploadInterceptor,
    { provide: SheetSandbox, useFactory: (config: AppConfig) => new SheetSandbox(config.importLimits), inject: [AppConfig] },
  ],
})
export class ImportModule {}
