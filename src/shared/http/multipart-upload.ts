import { Inject, Injectable, mixin, type CallHandler, type ExecutionContext, type NestInterceptor, type Type } from '@nestjs/common';
import type { Request, Response } from 'express';
import multer, { type StorageEngine } from 'multer';
import type { Observable } from 'rxjs';
import { AppConfig, UPLOAD_ENVELOPE_BYTES } from '../../config/app-config.js';
import type { Actor } from '../domain/actor.js';
import { InvalidInputError, PayloadTooLargeError, type DomainError, type FieldProblem } from '../domain/domain-error.js';
import { UploadMemoryBudget, type MemoryHold } from '../upload-memory.js';
import { holdUntilClosed, takeAsItArrives } from './body-memory.js';
import { checkUtf8Fields, type CheckedMultipart } from './invalid-utf8.js';
import { MultipartFileNames } from './multipart-file-names.js';
import { ProblemDetailsFilter } from './problem-details.filter.js';
import { sendProblem } from './problem.js';
import { invalidInput } from './validation.pipe.js';

/** A client that keeps sending after its 413 or 503 is cut off after this long. */
const DISCARD_GRACE_MS = 10_000;

const problems = new ProblemDetailsFilter();

export type UploadedFilePart = Express.Multer.File;

function tooLarge(cap: number): PayloadTooLargeError {
  return new PayloadTooLargeError(`The uploaded file is larger than the upload limit of ${cap} bytes`);
}

/**
 * Answers a refusal (413, 503) at once, before the rest of the body is read;
 * the remainder is then read and thrown away (so the client can see the
 * answer rather than a broken pipe), for a bounded time. Whatever reads the
 * body keeps no more of it once the answer is out (`res.headersSent`).
 */
function refuseNow(req: Request, res: Response, error: DomainError): void {
  if (res.headersSent) return;
  sendProblem(res, problems.toProblem(error, req));
  const timer = setTimeout(() => req.destroy(), DISCARD_GRACE_MS);
  timer.unref();
  req.once('close', () => clearTimeout(timer));
  req.once('end', () => clearTimeout(timer));
}

/**
 * multer's memory storage with the cap enforced while the bytes arrive. Once
 * the request is answered (413 here, 503 for memory) the file is no longer kept.
 */
function cappedMemoryStorage(cap: number): StorageEngine {
  return {
    _handleFile(req, file, cb) {
      const res = (req as Request).res!;
      const chunks: Buffer[] = [];
      let size = 0;
      let dropped = false;
      file.stream.on('data', (chunk: Buffer) => {
        if (dropped) return;
        size += chunk.length;
        if (size > cap) refuseNow(req as Request, res, tooLarge(cap));
        if (res.headersSent) {
          dropped = true;
          chunks.length = 0;
          return;
        }
        chunks.push(chunk);
      });
      file.stream.on('error', (error) => cb(error));
      file.stream.on('end', () => {
        // after a 503 the error is never written: MultipartUpload throws its refusal instead
        if (dropped) return cb(tooLarge(cap));
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
 * anything is read, and again while the file streams in. The body's bytes
 * are held against the process's upload memory budget until the response
 * ends: the declared Content-Length up front, or else each chunk as it
 * comes; a body that cannot fit is a 503 with Retry-After (a 429 when it is
 * its user's share that it passes), answered before the rest is read.
 * Errors are domain errors (413, 503, 429, 400 naming the part,
 * 400 naming a text field that is not UTF-8; the file's bytes are its own;
 * 400 naming each part the upload does not take: another file part, or a
 * text field beside the file).
 * Used by `FileUploadInterceptor`, or called by a handler itself where an
 * interceptor would cost too much.
 */
export class MultipartUpload {
  private readonly upload: CheckedMultipart;

  constructor(
    private readonly config: AppConfig,
    private readonly part: string,
    private readonly memory: UploadMemoryBudget,
  ) {
    const parse = multer({
      storage: cappedMemoryStorage(config.maxUploadBytes),
      limits: { fileSize: config.maxUploadBytes, files: 1, fields: 20, parts: 30, fieldSize: 1024 * 1024 },
      defParamCharset: 'utf8',
    }).single(part);
    this.upload = checkUtf8Fields(parse, config.maxUploadBytes + UPLOAD_ENVELOPE_BYTES);
  }

  /** The uploaded file of a multipart request, once its body is read; undefined for any other request (or without a file). */
  async receive(req: Request, res: Response): Promise<UploadedFilePart | undefined> {
    if (!req.is('multipart/form-data')) return undefined;
    const declared = Number(req.headers['content-length']);
    // Counted against the user the request authenticated as (the guard ran before).
    const hold = holdUntilClosed(this.memory, res, (req as Request & { user?: Actor }).user?.userId);
    const refusal = this.refusalUnread(declared, hold);
    if (refusal) {
      refuseNow(req, res, refusal);
      req.resume();
      throw refusal;
    }
    // A declared length was taken whole: Node never reads past it.
    const counting = Number.isFinite(declared) ? undefined : takeAsItArrives(req, res, hold, (refusal) => refuseNow(req, res, refusal));
    const names = this.watchFileNames(req);
    try {
      await this.parse(req, res, names.filesNotTaken);
    } catch (error) {
      // Refused for memory while the body came in: that is the answer, whatever the parser made of the rest.
      throw counting?.refusal ?? error;
    } finally {
      counting?.stop();
      names.stop();
    }
    // Refused while the last parts came in: what was read is not written.
    if (counting?.refusal) throw counting.refusal;
    const file = (req as Request & { file?: UploadedFilePart }).file;
    const problem = names.problem();
    const refused = [
      ...(problem ? [{ field: this.part, message: problem }] : []),
      // multer drops another part's file without a file name (a file with one was refused while parsing).
      ...this.notTaken(names.filesNotTaken()),
      ...(file ? this.textAlong(req.body) : []),
    ];
    if (refused.length) throw invalidInput(refused);
    return file;
  }

  private notTaken(files: readonly string[]): FieldProblem[] {
    return files.map((field) => ({ field, message: `the file must be sent in a form part named "${this.part}"` }));
  }

  /**
   * DESIGN.md §2: a parameter a request does not take is a 400 naming it.
   * Along a file the upload takes no text field, its own name included (the
   * file is the value): the handler reads only the file, so they would be
   * ignored. (Without a file the text fields are the handler's: a files
   * value given by URL, checked as a JSON body is.)
   */
  private textAlong(body: unknown): FieldProblem[] {
    const names = body !== null && typeof body === 'object' ? Object.keys(body) : [];
    return names.map((name) => ({
      field: name,
      message: name === this.part ? `the file is the value: send the part "${name}" once, as a file` : `is not a part this upload takes (only the file part "${this.part}")`,
    }));
  }

  /**
   * Reads the file name the part gives as the body comes in: one without a
   * file name in it ("", "..") would otherwise pass for a text value, or for
   * no value at all (`MultipartFileNames`).
   */
  private watchFileNames(req: Request): { stop(): void; problem(): string | undefined; filesNotTaken(): readonly string[] } {
    const boundary = MultipartFileNames.boundaryOf(req.headers['content-type']);
    if (!boundary) return { stop: () => undefined, problem: () => undefined, filesNotTaken: () => [] };
    const names = new MultipartFileNames(boundary, this.part);
    const read = (chunk: Buffer) => names.write(chunk);
    req.on('data', read);
    return { stop: () => req.off('data', read), problem: () => names.problem, filesNotTaken: () => names.filesNotTaken };
  }

  /** `filesNotTaken`: the other file parts read so far, when the parser fails. */
  private parse(req: Request, res: Response, filesNotTaken: () => readonly string[]): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.upload(req, res, (error, notUtf8) => (error ? reject(this.toDomainError(error, filesNotTaken())) : notUtf8 ? reject(notUtf8) : resolve()));
    });
  }

  /** Refused from Content-Length alone: too large for the cap (413), or for the memory left now (503) or the user's share of it (429). */
  private refusalUnread(declared: number, hold: MemoryHold): DomainError | undefined {
    if (!Number.isFinite(declared)) return undefined;
    const cap = this.config.maxUploadBytes;
    if (declared > cap + UPLOAD_ENVELOPE_BYTES) return tooLarge(cap);
    return hold.take(declared) ? undefined : hold.refusal();
  }

  private toDomainError(error: unknown, filesNotTaken: readonly string[]): unknown {
    const part = this.part;
    if (error instanceof PayloadTooLargeError) return error;
    if (error instanceof multer.MulterError) {
      if (error.code === 'LIMIT_FILE_SIZE') return tooLarge(this.config.maxUploadBytes);
      // multer stops at the first file part it does not take, or at a second file (it counts one), naming at most
      // that part; each other file part the body has given so far is named instead (read before busboy reads it).
      if ((error.code === 'LIMIT_UNEXPECTED_FILE' || error.code === 'LIMIT_FILE_COUNT') && filesNotTaken.length) return invalidInput(this.notTaken(filesNotTaken));
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

    constructor(@Inject(AppConfig) config: AppConfig, @Inject(UploadMemoryBudget) memory: UploadMemoryBudget) {
      this.upload = new MultipartUpload(config, part, memory);
    }

    async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
      const http = context.switchToHttp();
      await this.upload.receive(http.getRequest<Request>(), http.getResponse<Response>());
      return next.handle();
    }
  }
  return mixin(Interceptor);
}
