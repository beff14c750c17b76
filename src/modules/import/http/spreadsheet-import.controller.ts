import { Controller, HttpCode, Post, Req, UseInterceptors } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiCreatedResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { Request } from 'express';
import type { Actor } from '../../../shared/domain/actor.js';
import { CurrentActor } from '../../../shared/http/actor.decorator.js';
import { FileUploadInterceptor } from '../../../shared/http/file-upload.interceptor.js';
import { DiscoverSpreadsheetService, type DiscoverResult } from '../application/discover-spreadsheet.service.js';

/** The spec's multipart part holding the spreadsheet. */
export const SpreadsheetUploadInterceptor = FileUploadInterceptor('file');

const DISCOVER_RESPONSE = {
  description: 'the stored upload and its columns; `rows` counts every row, header included',
  schema: {
    type: 'object',
    properties: {
      file_id: { type: 'integer' },
      format: { type: 'string', enum: ['xlsx', 'csv', 'ods'] },
      rows: { type: 'integer' },
      fields: {
        type: 'array',
        items: {
          type: 'object',
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

@ApiTags('importers')
@ApiSecurity('api_key')
@Controller('importers/spreadsheet')
export class SpreadsheetImportController {
  constructor(private readonly discovery: DiscoverSpreadsheetService) {}

  @Post('discover')
  @HttpCode(201)
  @UseInterceptors(SpreadsheetUploadInterceptor)
  @ApiConsumes('multipart/form-data')
  @ApiBody({
    schema: { type: 'object', required: ['file'], properties: { file: { type: 'string', format: 'binary' } } },
    description: 'XLSX, CSV or ODS, told apart by content; anything else is 415',
  })
  @ApiCreatedResponse(DISCOVER_RESPONSE)
  discover(@CurrentActor() actor: Actor, @Req() req: Request): Promise<DiscoverResult> {
    return this.discovery.discover(req.file, actor);
  }
}
