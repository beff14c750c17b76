import { Inject, Injectable } from '@nestjs/common';
import { AppConfig } from '../../../config/app-config.js';
import { MultipartUpload } from '../../../shared/http/multipart-upload.js';
import { UploadMemoryBudget } from '../../../shared/upload-memory.js';

/**
 * The spec's first way of setting a files field: a multipart part named
 * `value`. The attribute handlers read it themselves (`receive`) rather than
 * through an interceptor: with any interceptor on a route, Nest runs each of
 * its requests through an RxJS pipeline, which cost a JSON attribute set
 * about 9 % of its CPU (docs/PERFORMANCE.md, issue 15, ninth pass).
 */
@Injectable()
export class ValueUpload extends MultipartUpload {
  constructor(@Inject(AppConfig) config: AppConfig, @Inject(UploadMemoryBudget) memory: UploadMemoryBudget) {
    super(config, 'value', memory);
  }
}
