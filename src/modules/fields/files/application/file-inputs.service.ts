import path from 'node:path';
import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../../../config/app-config.js';
import { PayloadTooLargeError } from '../../../../shared/domain/domain-error.js';
import type { UploadedFile } from '../../contracts/fields.api.js';
import { isValidFileName, type FileInput } from '../../domain/values/index.js';
import { fetchFileByUrl, isForbiddenAddress } from '../infrastructure/safe-url-fetcher.js';

/** A file ready to be stored: the four ways of giving one all end here. */
export interface PreparedFile {
  name: string;
  mimeType: string;
  bytes: Buffer;
}

export type { UploadedFile } from '../../contracts/fields.api.js';

const FETCH_TIMEOUT_MS = 30_000;
const MIME_TYPE = /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/;

/** For the `{name, data: "<text>"}` form, which says nothing about the type. */
const TEXT_TYPES: Record<string, string> = {
  '.txt': 'text/plain',
  '.md': 'text/markdown',
  '.markdown': 'text/markdown',
  '.csv': 'text/csv',
  '.tsv': 'text/tab-separated-values',
  '.json': 'application/json',
  '.xml': 'application/xml',
  '.html': 'text/html',
  '.htm': 'text/html',
  '.css': 'text/css',
  '.js': 'text/javascript',
  '.svg': 'image/svg+xml',
  '.yaml': 'application/yaml',
  '.yml': 'application/yaml',
};

/**
 * Which resolved addresses "file by URL" refuses to connect to (unless
 * FILE_URL_ALLOW_PRIVATE). A provider so e2e tests can declare one loopback
 * address "public" to stand in for an outside server (redirect checks).
 */
@Injectable()
export class FileUrlPolicy {
  isForbidden(ip: string): boolean {
    return isForbiddenAddress(ip);
  }
}

/** Turns the JSON forms (URL, text data, base64 data URL) and uploads into bytes with a name and type. */
@Injectable()
export class FileInputs {
  constructor(
    private readonly config: AppConfig,
    private readonly policy: FileUrlPolicy,
  ) {}

  async prepare(field: string, input: FileInput): Promise<PreparedFile> {
    switch (input.kind) {
      case 'url': {
        const fetched = await fetchFileByUrl(input.url, {
          maxBytes: this.config.maxUploadBytes,
          timeoutMs: FETCH_TIMEOUT_MS,
          allowPrivate: this.config.fileUrlAllowPrivate,
          isForbidden: (ip) => this.policy.isForbidden(ip),
          field,
        });
        return { name: fetched.name, mimeType: fetched.mimeType, bytes: fetched.bytes };
      }
      case 'text': {
        const bytes = this.capped(Buffer.from(input.content, 'utf8'));
        return { name: input.name, mimeType: TEXT_TYPES[path.extname(input.name).toLowerCase()] ?? 'text/plain', bytes };
      }
      case 'base64':
        return { name: input.name, mimeType: input.mimeType, bytes: this.capped(input.bytes) };
    }
  }

  fromUpload(file: UploadedFile): PreparedFile {
    const base = path.basename(file.originalname.replace(/\\/g, '/'));
    const name = isValidFileName(base) ? base : 'upload';
    const type = (file.mimetype ?? '').split(';')[0].trim().toLowerCase();
    return { name, mimeType: MIME_TYPE.test(type) ? type : 'application/octet-stream', bytes: this.capped(file.buffer) };
  }

  private capped(bytes: Buffer): Buffer {
    const cap = this.config.maxUploadBytes;
    if (bytes.length > cap) throw new PayloadTooLargeError(`The file is larger than the upload limit of ${cap} bytes`);
    return bytes;
  }
}
