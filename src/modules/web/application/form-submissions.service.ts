import { Injectable } from '@nestjs/common';
import { UnitOfWork } from '../../../shared/persistence/unit-of-work.js';
import { FormSubmissionsRepository } from '../infrastructure/form-submissions.repository.js';
import { SESSION_LIFETIME_MS } from './sessions.service.js';

/** A posted form's one-time submission id, and the (hashed) browser secret it is bound to. */
export interface FormSubmission {
  scopeHash: string;
  id: string;
}

export type Once<T> = { repeated: false; value: T } | { repeated: true; note: string | null };

/**
 * Forms that must act once per submission (create an API key, register an
 * app, rotate its secret, sign up): a reload of the answer, or a second
 * click, posts the same submission id again. Remembered in the database for
 * as long as a session lives (the CSRF token it came with is good that long).
 */
@Injectable()
export class FormSubmissionsService {
  constructor(
    private readonly submissions: FormSubmissionsRepository,
    private readonly uow: UnitOfWork,
  ) {}

  /**
   * Runs `work` unless this submission of `action` was already used. The
   * claim and the work share one transaction: work that throws leaves the
   * submission unused (a refused form may be sent again), and a repeat sent
   * while the first is still running waits for its outcome. A form without a
   * submission id (a page rendered before ids existed) always runs.
   */
  once<T>(submission: FormSubmission | undefined, action: string, work: () => Promise<T>, note: string | null = null): Promise<Once<T>> {
    if (!submission) return work().then((value) => ({ repeated: false, value }));
    return this.uow.run(async (): Promise<Once<T>> => {
      const expires = new Date(Date.now() + SESSION_LIFETIME_MS);
      if (!(await this.submissions.claim(submission.scopeHash, submission.id, action, note, expires))) {
        return { repeated: true, note: await this.submissions.noteOf(submission.scopeHash, submission.id, action) };
      }
      return { repeated: false, value: await work() };
    });
  }
}
