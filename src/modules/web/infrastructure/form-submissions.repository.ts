import { Injectable } from '@nestjs/common';
import { Sql } from '../../../shared/persistence/sql.js';

/** One-time form submission ids already used: `web.form_submissions`. */
@Injectable()
export class FormSubmissionsRepository {
  constructor(private readonly sql: Sql) {}

  /**
   * Records the submission as used; false when it already was. A claim by a
   * transaction still open makes this wait for it (the unique key), so a
   * second click learns the first one's outcome: kept if it committed, gone
   * if it rolled back. Expired rows go on the way.
   */
  async claim(scopeHash: string, submission: string, action: string, note: string | null, expiresAt: Date): Promise<boolean> {
    await this.sql.run(`DELETE FROM web.form_submissions WHERE expires_at < now()`);
    const rows = await this.sql.rows(
      `INSERT INTO web.form_submissions (scope_hash, submission, action, note, expires_at) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT DO NOTHING RETURNING 1`,
      [scopeHash, submission, action, note, expiresAt],
    );
    return rows.length === 1;
  }

  /** What the first use of a submission noted (the user name a sign-up created). */
  async noteOf(scopeHash: string, submission: string, action: string): Promise<string | null> {
    const row = await this.sql.one<{ note: string | null }>(
      `SELECT note FROM web.form_submissions WHERE scope_hash = $1 AND submission = $2 AND action = $3`,
      [scopeHash, submission, action],
    );
    return row?.note ?? null;
  }
}
