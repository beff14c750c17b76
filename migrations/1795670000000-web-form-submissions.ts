import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The forms a browser has already sent (`FormSubmissionsService`): a reload
 * or a second click re-posts the same one-time submission id, which must not
 * act again. Keyed by a hash of the secret the form's CSRF token came from
 * (the session's token, or the pre-session cookie's before login), so ids
 * are per browser session; rows expire with the session. In the database,
 * not in memory: any instance may get the second post.
 */
export class WebFormSubmissions1795670000000 implements MigrationInterface {
  name = 'WebFormSubmissions1795670000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE web.form_submissions (
        scope_hash  text NOT NULL,
        submission  text NOT NULL,
        action      text NOT NULL,
        note        text,
        expires_at  timestamptz NOT NULL,
        PRIMARY KEY (scope_hash, submission, action)
      )`);
    await q.query(`CREATE INDEX form_submissions_expires_idx ON web.form_submissions (expires_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE web.form_submissions`);
  }
}
