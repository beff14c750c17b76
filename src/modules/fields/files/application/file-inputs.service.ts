import { networkInterfaces } from 'node:os';
import path from 'node:path';
import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../../../config/app-config.js';
import { PayloadTooLargeError } from '../../../../shared/domain/domain-error.js';
import { UploadMemoryBudget, type MemoryHold, type MemoryOwner } from '../../../../shared/upload-memory.js';
import type { UploadedFile } from '../../contracts/fields.api.js';
import { invalidValue, isValidFileName, type FileInput } from '../../domain/values/index.js';
import { isHostAddress, type NetworkInterfaces } from '../infrastructure/forbidden-address.policy.js';
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
 * FILE_URL_ALLOW_PRIVATE): the ranges no fetch may reach, and the host's own
 * interfaces, read at each check; and how long the downloads of one request
 * may take. A provider so e2e tests can declare one loopback address "public"
 * to stand in for an outside server (redirect checks), give the host an
 * interface it does not have, and shorten the timeout.
 */
@Injectable()
export class FileUrlPolicy {
  timeoutMs = FETCH_TIMEOUT_MS;
  interfaces: NetworkInterfaces = networkInterfaces;

  isForbidden(ip: string): boolean {
    return isForbiddenAddress(ip);
  }

  isOwnAddress(ip: string): boolean {
    return isHostAddress(ip, this.interfaces);
  }
}

/**
 * What the file URLs of one request may still download. They share one size
 * cap and one deadline: with one each, a request listing many URLs (a 1 MiB
 * body names thousands) made the server hold MAX_UPLOAD_BYTES per URL in
 * memory, and wait up to the timeout per URL.
 */
export interface UrlDownloadBudget {
  bytesLeft: number;
  /** Epoch milliseconds. */
  deadline: number;
  /**
   * The downloaded bytes' share of the memory all requests' uploads may hold
   * (UPLOAD_MEMORY_MAX_BYTES), and of the acting user's share of it: whoever
   * asked for the budget releases it, in a finally, once the request is done
   * with the files.
   */
  readonly memory: MemoryHold;
}

/** Turns the JSON forms (URL, text data, base64 data URL) and uploads into bytes with a name and type. */
@Injectable()
export class FileInputs {
  constructor(
    private readonly config: AppConfig,
    private readonly policy: FileUrlPolicy,
    private readonly memory: UploadMemoryBudget,
  ) {}

  /**
   * One per request: every `prepare` of the request takes it, and the caller
   * releases its `memory`. `owner`: the user the request acts for, whose
   * share of the memory the downloads count against with their uploads.
   */
  downloadBudget(owner: MemoryOwner): UrlDownloadBudget {
    return { bytesLeft: this.config.maxUploadBytes, deadline: Date.now() + this.policy.timeoutMs, memory: this.memory.hold(owner) };
  }

  async prepare(field: string, input: FileInput, budget: UrlDownloadBudget): Promise<PreparedFile> {
    switch (input.kind) {
      case 'url':
        return this.download(field, input.url, budget);
      case 'text': {
        const bytes = this.capped(Buffer.from(input.content, 'utf8'));
        return { name: input.name, mimeType: TEXT_TYPES[path.extname(input.name).toLowerCase()] ?? 'text/plain', bytes };
      }
      case 'base64':
        return { name: input.name, mimeType: input.mimeType, bytes: this.capped(input.bytes) };
    }
  }

  private async download(field: string, url: string, budget: UrlDownloadBudget): Promise<PreparedFile> {
    const timeoutMs = budget.deadline - Date.now();
    if (timeoutMs <= 0) throw invalidValue(field, 'file URL timed out');
    const cap = this.config.maxUploadBytes;
    const fetched = await fetchFileByUrl(url, {
      maxBytes: budget.bytesLeft,
      tooLarge: budget.bytesLeft < cap ? `file URLs of one request may bring at most ${cap} bytes in all` : undefined,
      timeoutMs,
      allowPrivate: this.config.fileUrlAllowPrivate,
      isForbidden: (ip) => this.policy.isForbidden(ip),
      isOwnAddress: (ip) => this.policy.isOwnAddress(ip),
      field,
      memory: budget.memory,
    });
    budget.bytesLeft -= fetched.bytes.length;
    return { name: fetched.name, mimeType: fetched.mimeType, bytes: fetched.bytes };
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
