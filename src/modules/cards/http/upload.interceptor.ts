import { FileUploadInterceptor, type UploadedFilePart } from '../../../shared/http/file-upload.interceptor.js';

/** The spec's first way of setting a files field: a multipart part named `value`. */
export const UploadInterceptor = FileUploadInterceptor('value');

export type UploadedValue = UploadedFilePart;
