import { Injectable } from '@nestjs/common';
import { Sql, toId } from '../../../shared/persistence/sql.js';

/** Browser sessions: `web.sessions`, keyed by the SHA-256 of the cookie's token. */
@Injectable()
export class SessionsRepository {
  constructor(private readonly sql: Sql) {}

  /** A new session; expired ones go, and the one `replacedHash` names (the browser's previous session). */
  async insert(tokenHash: string, userId: number, expiresAt: Date, replacedHash: string | null = null): Promise<void> {
    await this.sql.run(`DELETE FROM web.sessions WHERE expires_at < now() OR token_hash = $1`, [replacedHash]);
    await this.sql.run(`INSERT INTO web.sessions (token_hash, user_id, expires_at) VALUES ($1, $2, $3)`, [
      tokenHash,
      userId,
      expiresAt,
    ]);
  }

  async userOf(tokenHash: string): Promise<number | null> {
    const row = await this.sql.one<{ user_id: number | string }>(
      `SELECT user_id FROM web.sessions WHERE token_hash = $1 AND expires_at > now()`,
      [tokenHash],
    );
    return row ? toId(row.user_id) : null;
  }

  /** Ends every session of a user (a password change: a session stolen with the old password goes too). */
  async deleteAllOf(userId: number): Promise<void> {
    await this.sql.run(`DELETE FROM web.sessions WHERE user_id = $1`, [userId]);
  }

  async delete(tokenHash: string): Promise<void> {
    await this.sql.run(`DELETE FROM web.sessions WHERE token_hash = $1`, [tokenHash]);
  }
}
