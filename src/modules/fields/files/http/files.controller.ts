import type { Readable } from 'node:stream';
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
    await sendBody(file.stream, file.size, res);
  }
}

/**
 * Writes the file's `size` bytes, the last of them with `res.end`: the answer
 * is complete with its last byte, not once the disk says the file ended
 * (another read, which `pipeline` waited for before `res.end`). A client that
 * closes as soon as it has Content-Length bytes, as curl does, left before
 * that end and was logged as cut off. The file stream is destroyed (its
 * handle closed) when the client goes away early or a read fails, and the
 * answer cut when the file holds fewer bytes than declared.
 */
async function sendBody(body: Readable, size: number, res: Response): Promise<void> {
  let closed = false;
  res.once('close', () => (closed = true));
  let sent = 0;
  try {
    if (size === 0) return void res.end();
    for await (const chunk of body as AsyncIterable<Buffer>) {
      if (closed) return;
      sent += chunk.length;
      if (sent >= size) return void res.end(chunk.subarray(0, chunk.length - (sent - size)));
      if (!res.write(chunk) && !(await drained(res, () => closed))) return;
    }
    res.destroy();
  } catch {
    res.destroy();
  } finally {
    body.destroy();
  }
}

/** Whether the answer can take more (true) or was closed while it waited (false). */
function drained(res: Response, isClosed: () => boolean): Promise<boolean> {
  if (isClosed()) return Promise.resolve(false);
  return new Promise((resolve) => {
    const settle = (ok: boolean) => () => {
      res.off('drain', onDrain).off('close', onClose);
      resolve(ok);
    };
    const onDrain = settle(true);
    const onClose = settle(false);
    res.once('drain', onDrain).once('close', onClose);
  });
}
