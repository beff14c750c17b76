import { createHash, randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { AccountsApi, type Account } from '../../identity/index.js';
import { SessionsRepository } from '../infrastructure/sessions.repository.js';

/** Sessions last a week from login; logging out ends them at once. */
export const SESSION_LIFETIME_MS = 7 * 24 * 60 * 60 * 1000;

/** How a secret is stored and compared: its SHA-256, hex (sessions' tokens, forms' submission scopes). */
export const tokenHash = (token: string) => createHash('sha256').update(token).digest('hex');

/**
 * Browser sessions stored in the database (DESIGN.md §10: no state in the
 * process, so any instance serves any request). The cookie holds a random
 * token; the table only its hash.
 */
@Injectable()
export class SessionsService {
  constructor(
    private readonly sessions: SessionsRepository,
    private readonly accounts: AccountsApi,
  ) {}

  /**
   * Starts a session, ending the one of `replacing` (the token the browser
   * sent, if any) in the same statement; the returned token goes into the
   * cookie and nowhere else.
   */
  async start(userId: number, replacing?: string): Promise<string> {
    const token = randomBytes(32).toString('base64url');
    const replaced = replacing && replacing.length <= 100 ? tokenHash(replacing) : null;
    await this.sessions.insert(tokenHash(token), userId, new Date(Date.now() + SESSION_LIFETIME_MS), replaced);
    return token;
  }

  /**
   * Changes the user's password (`AccountsApi.changePassword`) and, if it
   * changed, ends every session of the user and starts a new one for this
   * browser, in the transaction that replaces it (`alongWithChange`): never a
   * new password with the sessions of the old one still open. This browser
   * stays logged in, but under a new token, so a copy of its cookie taken
   * before stops working too. The new
   * token, or null when the current password was wrong (nothing changed).
   */
  async changePassword(userId: number, change: { current: string; next: string; address: string }): Promise<string | null> {
    let token: string | null = null;
    const changed = await this.accounts.changePassword(userId, change.current, change.next, change.address, async () => {
      await this.sessions.deleteAllOf(userId);
      token = await this.start(userId);
    });
    return changed ? token : null;
  }

  /** The account a session token belongs to; null for an unknown or expired one. */
  async account(token: string | undefined): Promise<Account | null> {
    if (!token || token.length > 100) return null;
    const userId = await this.sessions.userOf(tokenHash(token));
    return userId === null ? null : this.accounts.getAccount(userId);
  }

  async end(token: string | undefined): Promise<void> {
    if (token) await this.sessions.delete(tokenHash(token));
  }
}
