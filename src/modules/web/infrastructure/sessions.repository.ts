import { Injectable } from '@nestjs/common';
import { UnitOfWork } from '../../../shared/persistence/unit-of-work.js';

/** Browser sessions: `web.sessions`, keyed by the SHA-256 of the cookie's token. */
@Injectable()
export class SessionsRepository {
  constructor(private readonly uow: UnitOfWork) {}

  async insert(tokenHash: string, userId: number, expiresAt: Date): Promise<void> {
    await this.uow.manager.query(`DELETE FROM web.sessions WHERE expires_at < now()`);
    await this.uow.manager.query(`INSERT INTO web.sessions (token_hash, user_id, expires_at) VALUES ($1, $2, $3)`, [
      tokenHash,
      userId,
      expiresAt,
    ]);
  }

  async userOf(tokenHash: string): Promise<number | null> {
    const [row] = (await this.uow.manager.query(
      `SELECT user_id FROM web.sessions WHERE token_hash = $1 AND expires_at > now()`,
      [tokenHash],
    )) as Array<{ user_id: number | string }>;
    return row ? Number(row.user_id) : null;
  }

  async delete(tokenHash: string): Promise<void> {
    await this.uow.manager.query(`DELETE FROM web.sessions WHERE token_hash = $1`, [tokenHash]);
  }
}
