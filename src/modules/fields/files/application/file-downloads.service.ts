import type { Readable } from 'node:stream';
import { Injectable, Logger } from '@nestjs/common';
import type { Actor } from '../../../../shared/domain/actor.js';
import { NotFoundError } from '../../../../shared/domain/domain-error.js';
import { CardHierarchyApi } from '../../../card-hierarchy/index.js';
import { FileNotFoundError } from '../../domain/fields.errors.js';
import { FieldValuesRepository } from '../../infrastructure/field-values.repository.js';
import { FileStorage } from '../infrastructure/file-storage.js';

export interface Download {
  name: string;
  mimeType: string;
  size: number;
  stream: Readable;
}

/** GET /files/{id}: whoever may read the card may download its files. */
@Injectable()
export class FileDownloadsService {
  private readonly logger = new Logger(FileDownloadsService.name);

  constructor(
    private readonly cards: CardHierarchyApi,
    private readonly values: FieldValuesRepository,
    private readonly storage: FileStorage,
  ) {}

  async open(fileId: number, actor: Actor): Promise<Download> {
    const file = await this.values.findFile(fileId);
    if (!file) throw new FileNotFoundError();
    try {
      await this.cards.requireCard(file.cardId, actor, 'read');
    } catch (error) {
      if (error instanceof NotFoundError) throw new FileNotFoundError();
      throw error;
    }
    const opened = await this.storage.openStream(file.storageKey);
    if (!opened) {
      this.logger.error(`file ${file.id} has no stored content (key ${file.storageKey})`);
      throw new FileNotFoundError();
    }
    return { name: file.name, mimeType: file.mimeType, size: opened.size, stream: opened.stream };
  }
}
