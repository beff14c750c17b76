import { Injectable } from '@nestjs/common';
import type { Actor, Scope } from '../../../shared/domain/actor.js';
import { Sql, toId } from '../../../shared/persistence/sql.js';

export interface NewCode {
  codeHash: string;
  clientPk: number;
  userId: number;
  redirectUri: string;
  scopes: Scope[];
  codeChallenge: string | null;
  codeChallengeMethod: string | null;
  expiresAt: Date;
}

export interface CodeRow extends Omit<NewCode, 'codeHash'> {
  id: number;
  clientId: string;
  usedAt: Date | null;
}

export interface NewToken {
  accessHash: string;
  refreshHash: string | null;
  clientPk: number;
  userId: number;
  grantId: number;
  scopes: Scope[];
  accessExpiresAt: Date;
  refreshExpiresAt: Date | null;
}

export interface RefreshRow {
  id: number;
  clientPk: number;
  clientId: string;
  userId: number;
  grantId: number;
  scopes: Scope[];
  refreshExpiresAt: Date | null;
  revokedAt: Date | null;
}

/** One live authorization of a user, with its application. */
export interface LiveGrantRow {
  clientPk: number;
  clientName: string;
  scopes: Scope[];
  authorizedAt: Date;
  issuedAt: Date | null;
}

/** Rotated refresh tokens deleted at most per clean-up: each refresh adds one and runs one. */
const ROTATED_PRUNE_BATCH = 500;

const date = (v: Date | string | null): Date | null => (v === null ? null : new Date(v));
/** Scopes are stored space-separated, as OAuth sends them. */
const toScopes = (v: unknown): Scope[] => String(v).split(' ').filter(Boolean) as Scope[];

/**
 * Authorization codes and tokens. A code's row is also its authorization (the
 * grant: `oauth_tokens.grant_id`, whose token rows go with it), kept until a
 * day after its last token stopped working; `replayed_at` marks the
 * authorization ended (its code replayed, a refresh token reused, or a token
 * revoked by the client). Statements run on their own (no surrounding
 * transaction), and the order of `endGrant` with the lock `insertToken` takes
 * makes a racing code exchange or refresh safe.
 */
@Injectable()
export class OAuthGrantsRepository {
  constructor(private readonly sql: Sql) {}

  private query<T>(sql: string, params: unknown[]): Promise<T[]> {
    return this.sql.rows<T>(sql, params);
  }

  async insertCode(c: NewCode): Promise<number> {
    await this.removeEndedGrants();
    await this.pruneRotatedRefresh();
    const [row] = await this.query<{ id: number }>(
      `INSERT INTO identity.oauth_codes
         (code_hash, client_id, user_id, redirect_uri, scopes, code_challenge, code_challenge_method, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
      [c.codeHash, c.clientPk, c.userId, c.redirectUri, c.scopes.join(' '), c.codeChallenge, c.codeChallengeMethod, c.expiresAt],
    );
    return toId(row.id);
  }

  /**
   * Codes live 10 minutes; a used one is kept a day for replay detection. It
   * is also its authorization's row, which goes with every token row of it
   * (foreign key, ON DELETE CASCADE) a day after the last of those tokens
   * stopped working (revoked, or both its tokens expired). Until then the
   * hashes of its rotated refresh tokens stay too (`oauth_rotated_refresh_tokens`,
   * same key): presenting any of them again ends the authorization (reuse
   * detection), each until the end of the lifetime it had as a refresh token
   * (`pruneRotatedRefresh`). A refresh replaces its pair in one statement
   * (`insertToken`), so a live authorization always has the token row that
   * keeps it.
   */
  private async removeEndedGrants(): Promise<void> {
    await this.query(
      `DELETE FROM identity.oauth_codes c
        WHERE c.expires_at < now() - interval '1 day'
          AND NOT EXISTS (SELECT 1 FROM identity.oauth_tokens t
                           WHERE t.grant_id = c.id
                             AND coalesce(t.revoked_at, 'infinity'::timestamptz) > now() - interval '1 day'
                             AND greatest(t.access_expires_at, t.refresh_expires_at) > now() - interval '1 day')`,
      [],
    );
  }

  /**
   * Deletes rotated refresh tokens past the lifetime they had as refresh
   * tokens (`expires_at`): one that old could not be exchanged anyway, and
   * reuse detection no longer reads it (`findRotatedRefresh`, `grantOfToken`),
   * so a client refreshing for ever keeps at most its last lifetime's hashes.
   * Run before each code is stored and each refresh (which adds one): a
   * bounded batch, oldest first, skipping rows another clean-up holds.
   */
  private async pruneRotatedRefresh(): Promise<void> {
    await this.query(
      `DELETE FROM identity.oauth_rotated_refresh_tokens
        WHERE refresh_token_hash IN (SELECT refresh_token_hash FROM identity.oauth_rotated_refresh_tokens
                                      WHERE expires_at <= now() ORDER BY expires_at LIMIT ${ROTATED_PRUNE_BATCH}
                                        FOR UPDATE SKIP LOCKED)`,
      [],
    );
  }

  async findCode(codeHash: string): Promise<CodeRow | null> {
    const [r] = await this.query<Record<string, unknown>>(
      `SELECT c.id, c.client_id AS client_pk, k.client_id, c.user_id, c.redirect_uri, c.scopes,
              c.code_challenge, c.code_challenge_method, c.expires_at, c.used_at
         FROM identity.oauth_codes c JOIN identity.oauth_clients k ON k.id = c.client_id
        WHERE c.code_hash = $1`,
      [codeHash],
    );
    if (!r) return null;
    return {
      id: toId(r.id),
      clientPk: toId(r.client_pk),
      clientId: r.client_id as string,
      userId: toId(r.user_id),
      redirectUri: r.redirect_uri as string,
      scopes: toScopes(r.scopes),
      codeChallenge: r.code_challenge as string | null,
      codeChallengeMethod: r.code_challenge_method as string | null,
      expiresAt: date(r.expires_at as string)!,
      usedAt: date(r.used_at as string | null),
    };
  }

  /**
   * Spends a code without issuing anything (a code_verifier that does not
   * prove its challenge); false when it was already used (a replay).
   */
  async markCodeUsed(id: number): Promise<boolean> {
    const rows = await this.query(`UPDATE identity.oauth_codes SET used_at = now() WHERE id = $1 AND used_at IS NULL RETURNING id`, [id]);
    return rows.length === 1;
  }

  /**
   * Ends an authorization (a replayed code, a reused refresh token, a client's
   * revocation): mark it first, then revoke its tokens. A racing exchange or
   * refresh holds the grant row while it inserts its pair (`insertToken`), so
   * either its pair was committed before the mark was (and the revocation,
   * a later statement, sees it) or its insert finds the mark and refuses.
   */
  async endGrant(grantId: number): Promise<void> {
    await this.query(`UPDATE identity.oauth_codes SET replayed_at = now() WHERE id = $1`, [grantId]);
    await this.revokeGrant(grantId);
  }

  /**
   * A user's live authorizations, oldest first: not ended, and holding a
   * token pair that still works or can be refreshed (an authorization keeps
   * one such row, its current pair), or a code still to be exchanged. The
   * scopes are the pair's (a refresh may have narrowed the code's).
   */
  async liveGrantsOf(userId: number): Promise<LiveGrantRow[]> {
    const rows = await this.query<Record<string, unknown>>(
      `SELECT k.id AS client_pk, k.name, coalesce(t.scopes, g.scopes) AS scopes, g.created_at AS authorized_at, t.created_at AS issued_at
         FROM identity.oauth_codes g
         JOIN identity.oauth_clients k ON k.id = g.client_id
         LEFT JOIN identity.oauth_tokens t
                ON t.grant_id = g.id AND t.revoked_at IS NULL AND greatest(t.access_expires_at, t.refresh_expires_at) > now()
        WHERE g.user_id = $1 AND g.replayed_at IS NULL
          AND (t.id IS NOT NULL OR (g.used_at IS NULL AND g.expires_at > now()))
        ORDER BY g.created_at, g.id`,
      [userId],
    );
    return rows.map((r) => ({
      clientPk: toId(r.client_pk),
      clientName: r.name as string,
      scopes: toScopes(r.scopes),
      authorizedAt: date(r.authorized_at as string)!,
      issuedAt: date(r.issued_at as string | null),
    }));
  }

  /**
   * Ends every authorization a user gave one application, as `endGrant` ends
   * one: all of them marked first, then their tokens revoked, so a code
   * exchange or refresh racing this either stored its pair before the mark
   * (and the revocation sees it) or finds the mark and stores nothing.
   */
  async endGrantsOf(userId: number, clientPk: number): Promise<void> {
    await this.query(
      `UPDATE identity.oauth_codes SET replayed_at = now() WHERE user_id = $1 AND client_id = $2 AND replayed_at IS NULL`,
      [userId, clientPk],
    );
    await this.query(
      `UPDATE identity.oauth_tokens SET revoked_at = now()
        WHERE grant_id IN (SELECT id FROM identity.oauth_codes WHERE user_id = $1 AND client_id = $2) AND revoked_at IS NULL`,
      [userId, clientPk],
    );
  }

  /** Revokes every token of one authorization (the code's and its refreshed successors). */
  private async revokeGrant(grantId: number): Promise<void> {
    await this.query(
      `UPDATE identity.oauth_tokens SET revoked_at = now() WHERE grant_id = $1 AND revoked_at IS NULL`,
      [grantId],
    );
  }

  /**
   * Stores a token pair and, in the same statement, uses up what it was
   * issued for: the code (`{ code }`, marked used) or the pair it replaces
   * (`{ pair }`, a refresh). False, with nothing changed, when that was used
   * up already (another exchange or refresh came first: the caller treats it
   * as a replay) or the authorization has ended. One statement, so a refusal
   * or a failure never leaves the code spent or the old pair revoked without
   * the new pair stored (DESIGN.md §2).
   *
   * A code exchange takes the grant row (the code's, `used_at`) for update; a
   * refresh holds it FOR SHARE; either until the statement commits, against
   * `endGrant`'s mark: a mark not yet committed makes the statement wait and
   * then read the row again, and a mark that comes later waits for the pair.
   * The replaced pair's row is deleted; only its refresh token's hash stays,
   * with the end of its lifetime, in `oauth_rotated_refresh_tokens`, which is
   * all reuse detection reads (`findRotatedRefresh`). Two refreshes of one
   * pair: the second waits for the first's delete and then finds no row.
   * A refresh first prunes the rotated tokens past their lifetime (on its own:
   * a failure there rotates nothing).
   */
  async insertToken(t: NewToken, uses: { code: true } | { pair: number }): Promise<boolean> {
    if ('pair' in uses) await this.pruneRotatedRefresh();
    const params = [t.accessHash, t.refreshHash, t.clientPk, t.userId, t.grantId, t.scopes.join(' '), t.accessExpiresAt, t.refreshExpiresAt];
    const store = (source: string) =>
      `INSERT INTO identity.oauth_tokens
         (access_token_hash, refresh_token_hash, client_id, user_id, grant_id, scopes, access_expires_at, refresh_expires_at)
       SELECT $1::text, $2::text, $3::bigint, $4::bigint, s.grant_id, $6::text, $7::timestamptz, $8::timestamptz FROM ${source} s
       RETURNING id`;
    const rows =
      'code' in uses
        ? await this.query(
            `WITH spent AS (
               UPDATE identity.oauth_codes g SET used_at = now()
                WHERE g.id = $5::bigint AND g.used_at IS NULL AND g.replayed_at IS NULL
               RETURNING g.id AS grant_id
             ), stored AS (${store('spent')})
             SELECT id FROM stored`,
            params,
          )
        : await this.query(
            `WITH live_grant AS (
               SELECT g.id FROM identity.oauth_codes g WHERE g.id = $5::bigint AND g.replayed_at IS NULL FOR SHARE
             ), replaced AS (
               DELETE FROM identity.oauth_tokens r
                WHERE r.id = $9::bigint AND r.grant_id = (SELECT id FROM live_grant) AND r.revoked_at IS NULL
               RETURNING r.refresh_token_hash, r.grant_id, r.refresh_expires_at
             ), stored AS (${store('replaced')}
             ), rotated AS (
               INSERT INTO identity.oauth_rotated_refresh_tokens (refresh_token_hash, grant_id, expires_at)
               SELECT refresh_token_hash, grant_id, coalesce(refresh_expires_at, 'infinity') FROM replaced WHERE refresh_token_hash IS NOT NULL
               ON CONFLICT DO NOTHING
             )
             SELECT id FROM stored`,
            [...params, uses.pair],
          );
    return rows.length === 1;
  }

  /**
   * The authorization a rotated refresh token (by hash) belonged to, or null;
   * null too once it is past its lifetime as a refresh token, as after the
   * clean-up deleted it (`pruneRotatedRefresh`): one answer whenever it runs.
   */
  async findRotatedRefresh(refreshHash: string): Promise<number | null> {
    const [r] = await this.query<{ grant_id: number }>(
      `SELECT grant_id FROM identity.oauth_rotated_refresh_tokens WHERE refresh_token_hash = $1 AND expires_at > now()`,
      [refreshHash],
    );
    return r ? toId(r.grant_id) : null;
  }

  async findRefresh(refreshHash: string): Promise<RefreshRow | null> {
    const [r] = await this.query<Record<string, unknown>>(
      `SELECT t.id, t.client_id AS client_pk, k.client_id, t.user_id, t.grant_id, t.scopes, t.refresh_expires_at, t.revoked_at
         FROM identity.oauth_tokens t JOIN identity.oauth_clients k ON k.id = t.client_id
        WHERE t.refresh_token_hash = $1`,
      [refreshHash],
    );
    if (!r) return null;
    return {
      id: toId(r.id),
      clientPk: toId(r.client_pk),
      clientId: r.client_id as string,
      userId: toId(r.user_id),
      grantId: toId(r.grant_id),
      scopes: toScopes(r.scopes),
      refreshExpiresAt: date(r.refresh_expires_at as string | null),
      revokedAt: date(r.revoked_at as string | null),
    };
  }

  /**
   * The grant a token (access or refresh, by hash) of this client belongs to;
   * a rotated refresh token's too, within its lifetime (`findRotatedRefresh`).
   * (A superseded pair's access token is no longer known: it was revoked
   * with its pair.)
   */
  async grantOfToken(tokenHash: string, clientPk: number): Promise<number | null> {
    const [r] = await this.query<{ grant_id: number }>(
      `SELECT grant_id FROM identity.oauth_tokens
        WHERE (access_token_hash = $1 OR refresh_token_hash = $1) AND client_id = $2
       UNION ALL
       SELECT r.grant_id FROM identity.oauth_rotated_refresh_tokens r JOIN identity.oauth_codes g ON g.id = r.grant_id
        WHERE r.refresh_token_hash = $1 AND r.expires_at > now() AND g.client_id = $2
       LIMIT 1`,
      [tokenHash, clientPk],
    );
    return r ? toId(r.grant_id) : null;
  }

  /** The caller an unexpired, unrevoked access token stands for (one query: every API request pays it). */
  async actorOfAccessToken(accessHash: string): Promise<Actor | null> {
    const [r] = await this.query<{ user_id: number; username: string; is_admin: boolean; scopes: string }>(
      `SELECT u.id AS user_id, u.username, u.is_admin, t.scopes
         FROM identity.oauth_tokens t JOIN identity.users u ON u.id = t.user_id
        WHERE t.access_token_hash = $1 AND t.revoked_at IS NULL AND t.access_expires_at > now()`,
      [accessHash],
    );
    return r ? { userId: toId(r.user_id), username: r.username, isAdmin: r.is_admin, scopes: toScopes(r.scopes) } : null;
  }
}
