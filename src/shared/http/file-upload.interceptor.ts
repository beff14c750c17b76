import { Inject, Injectable, mixin, type CallHandler, type ExecutionContext, type NestInterceptor, type Type } from '@nestjs/common';
import type { Request, Response } from 'express';
import multer, { type StorageEngine } from 'multer';
import type { Observable } from 'rxjs';
import { AppConfig } from '../../config/app-config.js';
import { InvalidInputError, PayloadTooLargeError } from '../domain/domain-error.js';
import { checkUtf8Fields, type CheckedMultipart } from './invalid-utf8.js';
import { sendProblem, titleFor } from './problem.js';

/** Room for the multipart envelope and a few small text parts around the file. */
const MULTIPART_OVERHEAD = 64 * 1024;
/** A client that keeps sending after its 413 is cut off after this long. */
const DISCARD_GRACE_MS = 10_000;

export type UploadedFilePart = Express.Multer.File;

function tooLarge(cap: number): PayloadTooLargeError {
  return new PayloadTooLargeError(`The uploaded file is larger than the upload limit of ${cap} bytes`);
}

/**
 * Answers 413 at once, before the rest of the body is read; the remainder is
 * then read and thrown away (so the client can see the answer rather than a
 * broken pipe), for a bounded time.
 */
function answerTooLargeNow(req: Request, res: Response, cap: number): void {
  if (res.headersSent) return;
  const error = tooLarge(cap);
  sendProblem(res, { status: 413, type: error.code, title: titleFor(413), detail: error.message });
  const timer = setTimeout(() => req.destroy(), DISCARD_GRACE_MS);
  timer.unref();
  req.once('close', () => clearTimeout(timer));
  req.once('end', () => clearTimeout(timer));
}

/** multer's memory storage with the cap enforced while the bytes arrive. */
function cappedMemoryStorage(cap: number): StorageEngine {
  return {
    _handleFile(req, file, cb) {
      const chunks: Buffer[] = [];
      let size = 0;
      let over = false;
      file.stream.on('data', (chunk: Buffer) => {
        if (over) return;
        size += chunk.length;
        if (size > cap) {
          over = true;
          chunks.length = 0;
          answerTooLargeNow(req as Request, (req as Request).res!, cap);
          return;
        }
        chunks.push(chunk);
      });
      file.stream.on('error', (error) => cb(error));
      file.stream.on('end', () => {
        if (over) return cb(tooLarge(cap));
        const buffer = Buffer.concat(chunks, size);
        cb(null, { buffer, size });
      });
    },
    _removeFile(_req, file, cb) {
      delete (file as Partial<Express.Multer.File>).buffer;
      cb(null);
    },
  };
}

const MULTER_MESSAGES: Record<string, string> = {
  LIMIT_FILE_COUNT: 'send one file per request',
  LIMIT_PART_COUNT: 'too many form parts',
  LIMIT_FIELD_COUNT: 'too many form fields',
  LIMIT_FIELD_KEY: 'a form field name is too long',
  LIMIT_FIELD_VALUE: 'a form field value is too long',
};

/**
 * Reads a multipart body whose part `part` holds one file (`req.file`, the
 * other parts in `req.body`); JSON and form bodies are left untouched. The
 * upload cap (MAX_UPLOAD_BYTES) is checked against Content-Length before
 * anything is read, and again while the file streams in. Errors are domain
 * errors (413, 400 naming the part, 400 naming a text field that is not
 * UTF-8; the file's bytes are its own). Used by `FileUploadInterceptor`, or
 * called by a handler itself where an interceptor would cost too much.
 */
export class MultipartUpload {
  private readonly upload: CheckedMultipart;

  constructor(
    private readonly config: AppConfig,
    private readonly part: string,
  ) {
    const parse = multer({
      storage: cappedMemoryStorage(config.maxUploadBytes),
      limits: { fileSize: config.maxUploadBytes, files: 1, fields: 20, parts: 30, fieldSize: 1024 * 1024 },
      defParamCharset: 'utf8',
    }).single(part);
    this.upload = checkUtf8Fields(parse, config.maxUploadBytes + MULTIPART_OVERHEAD);
  }

  /** The uploaded file of a multipart request, once its body is read; undefined for any other request (or without a file). */
  async receive(req: Request, res: Response): Promise<UploadedFilePart | undefined> {
    if (!req.is('multipart/form-data')) return undefined;
    const cap = this.config.maxUploadBytes;
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > cap + MULTIPART_OVERHEAD) {
      answerTooLargeNow(req, res, cap);
      req.resume();
      throw tooLarge(cap);
    }
    await new Promise<void>((resolve, reject) => {
      this.upload(req, res, (error, notUtf8) => (error ? reject(this.toDomainError(error)) : notUtf8 ? reject(notUtf8) : resolve()));
    });
    return (req as Request & { file?: UploadedFilePart }).file;
  }

  private toDomainError(error: unknown): unknown {
    const part = this.part;
    if (error instanceof PayloadTooLargeError) return error;
    if (error instanceof multer.MulterError) {
      if (error.code === 'LIMIT_FILE_SIZE') return tooLarge(this.config.maxUploadBytes);
      const message =
        error.code === 'LIMIT_UNEXPECTED_FILE'
          ? `the file must be sent in a form part named "${part}"`
          : (MULTER_MESSAGES[error.code] ?? 'malformed multipart body');
      return new InvalidInputError(`${part}: ${message}`, [{ field: error.field ?? part, message }]);
    }
    // busboy's parse errors ("Unexpected end of form", "Malformed part header")
    if (error instanceof Error) {
      return new InvalidInputError('Malformed multipart body', [{ field: part, message: 'malformed multipart body' }]);
    }
    return error;
  }
}

/** An interceptor that reads a multipart upload of one file in `part` before the handler (`MultipartUpload`). */
export function FileUploadInterceptor(part: string): Type<NestInterceptor> {
  @Injectable()
  class Interceptor implements NestInterceptor {
    private readonly upload: MultipartUpload;

    constructor(@Inject(AppConfig) config: AppConfig) {
      this.upload = new MultipartUpload(config, part);
    }

    async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
      const http = context.switchToHttp();
      await this.upload.receive(http.getRequest<Request>(), http.getResponse<Response>());
      return next.handle();
    }
  }
  return mixin(Interceptor);
}
