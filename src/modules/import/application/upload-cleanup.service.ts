import { Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { UploadsRepository } from '../infrastructure/uploads.repository.js';

const SWEEP_EVERY_MS = 15 * 60 * 1000;

/**
 * Deletes discovered spreadsheets once their 24 hours are over. Every
 * instance sweeps (the delete is idempotent), so nothing depends on one of
 * them staying up; an expired upload is refused by the import step even
 * before the sweep removes it.
 */
@Injectable()
export class UploadCleanup implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(UploadCleanup.name);
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly uploads: UploadsRepository) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.sweep(), SWEEP_EVERY_MS);
    this.timer.unref();
    void this.sweep();
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
  }

  async sweep(): Promise<number> {
    try {
      return await this.uploads.deleteExpired();
    } catch (error) {
      this.logger.warn(`could not delete expired spreadsheet uploads: ${String(error)}`);
      return 0;
    }
  }
}
