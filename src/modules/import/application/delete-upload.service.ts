import { Injectable } from '@nestjs/common';
import type { Actor } from '../../../shared/domain/actor.js';
import { UnitOfWork } from '../../../shared/persistence/unit-of-work.js';
import { UploadNotFoundError } from '../domain/import.errors.js';
import { UploadsRepository } from '../infrastructure/uploads.repository.js';

/**
 * The owner deletes a discovered spreadsheet before its 24 hours are over,
 * which frees its share of the upload quota at once (the quota counts the
 * rows there are). An import that read the upload before keeps the rows it
 * read and finishes with all of them (it reads the upload once, whole, in
 * findLive); one that reads it after gets the unknown-upload 400.
 */
@Injectable()
export class DeleteUploadService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly uploads: UploadsRepository,
  ) {}

  async delete(fileId: number, actor: Actor): Promise<void> {
    const gone = await this.uow.run(() => this.uploads.deleteLive(fileId, actor.userId));
    if (!gone) throw new UploadNotFoundError();
  }
}
