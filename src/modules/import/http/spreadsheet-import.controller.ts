import { Body, Controller, HttpCode, Param, Post, Req, UseInterceptors } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags, ApiUnsupportedMediaTypeResponse } from '@nestjs/swagger';
import type { Request } from 'express';
import type { Actor } from '../../../shared/domain/actor.js';
import { CurrentActor } from '../../../shared/http/actor.decorator.js';
import { ID_SCHEMA } from '../../../shared/http/api-properties.js';
import { deleted, DeletionRoute, type Deleted } from '../../../shared/http/deletion.js';
import { Conflicts, RETRY_AFTER, RouteErrors } from '../../../shared/http/error-responses.js';
import { FileUploadInterceptor } from '../../../shared/http/multipart-upload.js';
import { ParseIdPipe } from '../../../shared/http/parse-id.pipe.js';
import { DeleteUploadService } from '../application/delete-upload.service.js';
import { DiscoverSpreadsheetService, type DiscoverResult } from '../application/discover-spreadsheet.service.js';
import { ImportSpreadsheetService, type ImportReport } from '../application/import-spreadsheet.service.js';
import { IMPORTABLE_TYPES, MAPPING_TYPES } from '../domain/import-mapping.js';
import { RequiresScope, WorkspaceRoutes } from '../../../shared/http/scopes.decorator.js';

/** The spec's multipart part holding the spreadsheet. */
export const SpreadsheetUploadInterceptor = FileUploadInterceptor('file');

const DISCOVER_RESPONSE = {
  description: 'the stored upload and its columns; `rows` counts every row, header included',
  schema: {
    type: 'object',
    required: ['file_id', 'format', 'rows', 'fields'],
    properties: {
      file_id: ID_SCHEMA,
      format: { type: 'string', enum: ['xlsx', 'csv', 'ods'] },
      rows: { type: 'integer' },
      fields: {
        type: 'array',
        items: {
          type: 'object',
          required: ['column', 'name', 'samples'],
          properties: {
            column: { type: 'integer', description: '0-based; the key of the import mapping' },
            name: { type: 'string' },
            samples: { type: 'array', items: { type: 'string' } },
          },
        },
      },
    },
  },
};

const MAPPING_SCHEMA = {
  type: 'object',
  description: 'keys are column numbers as strings ("0" is the first column); unmapped columns are ignored',
  additionalProperties: {
    type: 'object',
    required: ['type'],
    properties: {
      type: { type: 'string', enum: [...MAPPING_TYPES] },
      attr_type: { type: 'string', enum: [...IMPORTABLE_TYPES] },
      name: { type: 'string' },
    },
  },
};

const IMPORT_BODY = {
  type: 'object',
  required: ['discover_file_id', 'mapping'],
  properties: {
    discover_file_id: ID_SCHEMA,
    project_id: { ...ID_SCHEMA, description: 'an existing project; or give title and organization_id for a new one' },
    title: { type: 'string' },
    organization_id: ID_SCHEMA,
    mapping: MAPPING_SCHEMA,
    update_field: { type: 'string', description: 'title, ref or a mapped attribute name' },
    update_only: { type: 'boolean' },
    options: { type: 'object', properties: { ignore_header: { type: 'boolean' } } },
    dry_run: { type: 'boolean' },
  },
};

const IMPORT_RESPONSE = {
  description: 'what the import did (or, with dry_run, would do); any bad row is a 400 listing {row, column, message} and nothing is written',
  schema: {
    type: 'object',
    required: ['project_id', 'created', 'updated', 'skipped', 'children_created'],
    properties: {
      project_id: { ...ID_SCHEMA, nullable: true },
      created: { type: 'integer' },
      updated: { type: 'integer' },
      skipped: { type: 'integer' },
      children_created: { type: 'integer' },
    },
  },
};

@ApiTags('importers')
@WorkspaceRoutes()
@Controller('importers/spreadsheet')
export class SpreadsheetImportController {
  constructor(
    private readonly discovery: DiscoverSpreadsheetService,
    private readonly importer: ImportSpreadsheetService,
    private readonly deletion: DeleteUploadService,
  ) {}

  @Post('discover')
  @ApiOperation({ operationId: 'SpreadsheetImportController_discover', summary: 'Upload a spreadsheet and discover its columns' })
  @HttpCode(201)
  @UseInterceptors(SpreadsheetUploadInterceptor)
  @ApiConsumes('multipart/form-data')
  @ApiBody({
    schema: { type: 'object', required: ['file'], properties: { file: { type: 'string', format: 'binary' } } },
    description: 'XLSX, CSV or ODS, told apart by content; anything else is 415',
  })
  @ApiCreatedResponse(DISCOVER_RESPONSE)
  @ApiUnsupportedMediaTypeResponse({ description: 'INPUT.UNSUPPORTED_MEDIA: the file is not XLSX, CSV or ODS' })
  @RouteErrors(
    { status: 400, why: 'IMPORT.UNREADABLE_FILE: the file claims a supported format but cannot be read safely (corrupt, hostile or too slow to parse)' },
    { status: 413, why: 'INPUT.TOO_LARGE: the spreadsheet passes a cap of docs/IMPORT.md (rows, columns, cell length, zip entries and sizes); `limit` names its variable' },
    {
      status: 429,
      why: 'IMPORT.UPLOAD_QUOTA: the caller\'s uploads waiting for their import already number IMPORT_UPLOADS_PER_USER_MAX or hold IMPORT_UPLOAD_BYTES_PER_USER_MAX (the detail names which); Retry-After is the time until the first of them expires',
      headers: RETRY_AFTER,
    },
  )
  discover(@CurrentActor() actor: Actor, @Req() req: Request): Promise<DiscoverResult> {
    return this.discovery.discover(req.file, actor, req.body);
  }

  @Post('import')
  @ApiOperation({ operationId: 'SpreadsheetImportController_import', summary: 'Import an uploaded spreadsheet into a project' })
  @HttpCode(200)
  @ApiBody({ schema: IMPORT_BODY })
  @ApiOkResponse(IMPORT_RESPONSE)
  @RouteErrors(
    { status: 400, why: 'IMPORT.ROWS_INVALID: some rows cannot be imported; `errors` lists `{row, column, message}` for each, and nothing is written' },
    { status: 403, why: "ACCESS.FORBIDDEN: the caller's role in the team of `project_id` (or `organization_id`) does not allow writing there" },
  )
  @Conflicts({
    'IMPORT.FIELD_DELETED': 'a field the mapping names was deleted while the import ran; nothing is imported',
    'CARD.TOO_DEEP': 'a card the import would create (a child of a matched card) would be deeper than MAX_CARD_DEPTH levels below the top-level card; nothing is imported',
  })
  import(@CurrentActor() actor: Actor, @Body() body: Record<string, unknown>): Promise<ImportReport> {
    return this.importer.import(body ?? {}, actor);
  }

  /**
   * Frees the upload's share of IMPORT.UPLOAD_QUOTA at once, rather than
   * after its 24 hours. The scope discover needs, declared as such rather
   * than by the class's workspace rule: an upload is its user's, not a
   * team's, so no role can refuse it (roleErrorResponses reads that rule).
   */
  @DeletionRoute('files/:fileId', 'the upload and its stored rows are gone, and no longer count against the upload quota')
  @ApiOperation({ operationId: 'SpreadsheetImportController_deleteUpload', summary: 'Delete an uploaded spreadsheet' })
  @RouteErrors({
    status: 404,
    why: "IMPORT.UPLOAD_NOT_FOUND: no upload of the caller's has this `file_id` (never one, expired, already deleted, or another user's: one answer for all)",
  })
  @RequiresScope('write_workspace')
  async deleteUpload(@CurrentActor() actor: Actor, @Param('fileId', ParseIdPipe) fileId: number): Promise<Deleted> {
    await this.deletion.delete(fileId, actor);
    return deleted(fileId);
  }
}
