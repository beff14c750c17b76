import { pipeline } from 'node:stream/promises';
import { Controller, Get, Param, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import type { Actor } from '../../../../shared/domain/actor.js';
import { CurrentActor } from '../../../../shared/http/actor.decorator.js';
import { ParseIdPipe } from '../../../../shared/http/parse-id.pipe.js';
import { FileDownloadsService } from '../application/file-downloads.service.js';
import { WorkspaceRoutes } from '../../../../shared/http/scopes.decorator.js';

/** `attachment; filename="…"; filename*=UTF-8''…` (RFC 6266): an ASCII fallback and the real name. */
export function contentDisposition(name: string): string {
  const fallback = name.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  const encoded = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}

@ApiTags('files')
@WorkspaceRoutes()
@Controller('files')
export class FilesController {
  constructor(private readonly downloads: FileDownloadsService) {}

  /** Always an attachment with `nosniff`: stored files are never rendered as pages of this origin. */
  @Get(':id')
  @ApiOperation({ operationId: 'FilesController_download', summary: 'Download a stored file' })
  @ApiProduces('*/*')
  @ApiOkResponse({
    description: 'the file content, as an attachment, under the media type stored with the file (`Content-Type`: image/png, application/pdf, text/plain…)',
    schema: { type: 'string', format: 'binary' },
  })
  async download(@CurrentActor() actor: Actor, @Param('id', ParseIdPipe) id: number, @Res() res: Response): Promise<void> {
    const file = await this.downloads.open(id, actor);
    res.status(200);
    res.setHeader('Content-Type', file.mimeType);
    res.setHeader('Content-Length', String(file.size));
    res.setHeader('Content-Disposition', contentDisposition(file.name));
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Content-Security-Policy', "default-src 'none'; sandbox");
    res.setHeader('Cache-Control', 'private, no-cache');
    // pipeline destroys the file stream (closing its handle) if the client goes away early.
    await pipeline(file.stream, res).catch(() => res.destroy());
  }
}
