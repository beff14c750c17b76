import { createHash, timingSafeEqual } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import OAuth2Server from '@node-oauth/oauth2-server';
import type { Scope } from '../../../shared/domain/actor.js';
import { isScope } from '../auth/scope.policy.js';
import { isRegisteredRedirectUri } from '../domain/redirect-uri.js';
import { hashSecret, newOpaqueSecret } from '../domain/secrets.js';
import { OAuthClientsRepository, type OAuthClientRow } from '../infrastructure/oauth-clients.repository.js';
import { OAuthGrantsRepository } from '../infrastructure/oauth-grants.repository.js';

export const ACCESS_TOKEN_PREFIX = 'cwa_';
const REFRESH_TOKEN_PREFIX = 'cwr_';
const CODE_PREFIX = 'cwz_';

/** The library's client: `id` is the public client id, `pk` our row. */
export interface ModelClient extends OAuth2Server.Client {
  pk: number;
  name: string;
  confidential: boolean;
}

/**
 * The library carries the user opaquely; `grantId` is the code the tokens
 * stem from (set once a code exists), `uses` what storing the new pair uses
 * up (set when the library "revokes" the code or the refresh token).
 */
export interface ModelUser extends OAuth2Server.User {
  id: number;
  grantId?: number;
  uses?: { code: true } | { pair: number };
}

/** RFC 7636 §4.1: 43 to 128 unreserved characters (S256 challenges are 43). */
export const PKCE_VALUE = /^[A-Za-z0-9\-._~]{43,128}$/;

/** The grants this server issues tokens for (DESIGN.md §3), to every client. */
export const GRANT_TYPES: readonly string[] = ['authorization_code', 'refresh_token'];

export function toModelClient(c: OAuthClientRow): ModelClient {
  return {
    id: c.clientId,
    pk: c.id,
    name: c.name,
    confidential: c.secretHash !== null,
    redirectUris: c.redirectUris,
    grants: [...GRANT_TYPES],
  };
}

function sameHash(a: string, b: string): boolean {
  return a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));
}

/** What the library's PKCE check accepts (S256 only; no verifier without a challenge). */
function verifierProves(code: OAuth2Server.AuthorizationCode, verifier: string | undefined): boolean {
  if (!code.codeChallenge) return !verifier;
  if ((code.codeChallengeMethod ?? 'S256') !== 'S256' || !verifier || !PKCE_VALUE.test(verifier)) return false;
  return sameHash(createHash('sha256').update(verifier).digest('base64url'), code.codeChallenge);
}

/**
 * The storage model of `@node-oauth/oauth2-server`, plus what DESIGN.md §3
 * asks and the library leaves to the model: codes and tokens stored as
 * hashes, only the three scopes, single-use codes whose replay revokes the
 * tokens issued from them, and rotation with reuse detection for refresh
 * tokens. (PKCE S256 is checked by the library; the authorize pre-check
 * makes it mandatory for public clients.)
 *
 * A refused request changes nothing (DESIGN.md §2), but the library spends
 * the code (`revokeAuthorizationCode`) before it checks the verifier and the
 * redirect URI, and revokes the refresh token (`revokeToken`) before it
 * checks the requested scope; both before the new pair is stored. So those
 * two only note what the pair will use up, and `saveToken` uses it up in the
 * statement that stores the pair: whatever the library refuses after them,
 * or a failure to store, leaves the code and the tokens as they were,
 * whatever order the library checks things in. (Checking the scope ourselves
 * before the library runs would cover only that one refusal, and copy the
 * library's rule. One statement rather than a transaction around the
 * library's steps: no lock is held while the library runs, and ending an
 * authorization on a replay is not rolled back with the refusal that
 * follows it.) A replay still ends the authorization where it is found:
 * `getAuthorizationCode`, `getRefreshToken`, or `saveToken` finding the code
 * or pair used up by a request that came first.
 */
@Injectable()
export class OAuthModel implements OAuth2Server.AuthorizationCodeModel, OAuth2Server.RefreshTokenModel {
  /** Set on the model of one token request (`forTokenRequest`). */
  private codeVerifier?: string;

  constructor(
    private readonly clients: OAuthClientsRepository,
    private readonly grants: OAuthGrantsRepository,
  ) {}

  /**
   * Token and revocation endpoints: a confidential client must present its
   * secret; a public one has none to present (and proves itself by PKCE).
   */
  async getClient(clientId: string, clientSecret: string | null | undefined): Promise<ModelClient | null> {
    const c = await this.clients.findByClientId(clientId);
    if (!c) return null;
    if (c.secretHash === null) return clientSecret ? null : toModelClient(c);
    if (!clientSecret || !sameHash(hashSecret(clientSecret), c.secretHash)) return null;
    return toModelClient(c);
  }

  /** Every scope known, none twice; anything else (or nothing) is `invalid_scope`. */
  async validateScope(_user: OAuth2Server.User, _client: OAuth2Server.Client, scope?: string[]): Promise<Scope[] | false> {
    if (!scope?.length || !scope.every(isScope)) return false;
    return [...new Set(scope as Scope[])];
  }

  /** The same rule as the authorization pre-check (OAuthServerService.check), which approve's model narrows to the URI it matched. */
  async validateRedirectUri(redirectUri: string, client: OAuth2Server.Client): Promise<boolean> {
    return isRegisteredRedirectUri(client.redirectUris as string[], redirectUri);
  }

  async generateAuthorizationCode(): Promise<string> {
    return newOpaqueSecret(CODE_PREFIX).value;
  }

  async generateAccessToken(): Promise<string> {
    return newOpaqueSecret(ACCESS_TOKEN_PREFIX).value;
  }

  async generateRefreshToken(): Promise<string> {
    return newOpaqueSecret(REFRESH_TOKEN_PREFIX).value;
  }

  async saveAuthorizationCode(
    code: Pick<OAuth2Server.AuthorizationCode, 'authorizationCode' | 'expiresAt' | 'redirectUri' | 'scope' | 'codeChallenge' | 'codeChallengeMethod'>,
    client: OAuth2Server.Client,
    user: OAuth2Server.User,
  ): Promise<OAuth2Server.AuthorizationCode> {
    await this.grants.insertCode({
      codeHash: hashSecret(code.authorizationCode),
      clientPk: (client as ModelClient).pk,
      userId: (user as ModelUser).id,
      redirectUri: code.redirectUri,
      scopes: (code.scope ?? []) as Scope[],
      codeChallenge: code.codeChallenge ?? null,
      codeChallengeMethod: code.codeChallenge ? (code.codeChallengeMethod ?? 'S256') : null,
      expiresAt: code.expiresAt,
    });
    return { ...code, client, user };
  }

  /** A code seen before is a replay: revoke what it issued and refuse it. */
  async getAuthorizationCode(authorizationCode: string): Promise<OAuth2Server.AuthorizationCode | null> {
    const row = await this.grants.findCode(hashSecret(authorizationCode));
    if (!row) return null;
    if (row.usedAt) {
      await this.grants.endGrant(row.id);
      return null;
    }
    const client = await this.clients.findById(row.clientPk);
    if (!client) return null;
    return {
      id: row.id,
      authorizationCode,
      expiresAt: row.expiresAt,
      redirectUri: row.redirectUri,
      scope: row.scopes,
      codeChallenge: row.codeChallenge ?? undefined,
      codeChallengeMethod: row.codeChallengeMethod ?? undefined,
      client: toModelClient(client),
      user: { id: row.userId, grantId: row.id } satisfies ModelUser,
    };
  }

  /**
   * The model for one token request: it knows the request's `code_verifier`,
   * which `revokeAuthorizationCode` needs and the library does not pass it.
   */
  forTokenRequest(body: Record<string, unknown>): OAuthModel {
    const model = Object.create(this) as OAuthModel;
    model.codeVerifier = typeof body.code_verifier === 'string' ? body.code_verifier : undefined;
    return model;
  }

  /**
   * The code is spent by `saveToken`, with the pair stored. Except when the
   * request's code_verifier does not prove the code's challenge (the library
   * refuses it next): that spends the code now, as the library means it to,
   * against guessing verifiers (docs/OAUTH.md). Losing that to another
   * exchange counts as a replay.
   */
  async revokeAuthorizationCode(code: OAuth2Server.AuthorizationCode): Promise<boolean> {
    const id = code.id as number;
    if (verifierProves(code, this.codeVerifier)) {
      (code.user as ModelUser).uses = { code: true };
      return true;
    }
    if (await this.grants.markCodeUsed(id)) return true;
    await this.grants.endGrant(id);
    return false;
  }

  /**
   * Stores the pair and uses up the code or the refreshed pair in one
   * statement. Finding it used up already means another request came first
   * with the same code or refresh token (both read it while it was valid):
   * a replay, which ends the authorization, the winner's new pair included
   * (see `OAuthGrantsRepository.endGrant`).
   *
   * The pair's scope passes `validateScope` here, as at authorization: the
   * library's refresh grant checks only that the scope asked is within the
   * token's, and stored `scope=read_user read_user` as asked.
   */
  async saveToken(token: OAuth2Server.Token, client: OAuth2Server.Client, user: OAuth2Server.User): Promise<OAuth2Server.Token> {
    const holder = user as ModelUser;
    if (!holder.uses) throw new Error('saveToken: the library stores a pair without revoking the code or refresh token it was issued for');
    const scopes = await this.validateScope(user, client, token.scope);
    if (!scopes) throw new OAuth2Server.InvalidScopeError('Invalid scope: Requested scope is invalid');
    const saved = await this.grants.insertToken({
      accessHash: hashSecret(token.accessToken),
      refreshHash: token.refreshToken ? hashSecret(token.refreshToken) : null,
      clientPk: (client as ModelClient).pk,
      userId: holder.id,
      grantId: holder.grantId!,
      scopes,
      accessExpiresAt: token.accessTokenExpiresAt!,
      refreshExpiresAt: token.refreshTokenExpiresAt ?? null,
    }, holder.uses);
    if (!saved) {
      await this.grants.endGrant(holder.grantId!);
      throw new OAuth2Server.InvalidGrantError('Invalid grant: the authorization was revoked');
    }
    return { ...token, scope: scopes, client, user };
  }

  /**
   * A refresh token that was already rotated (or revoked) and comes back means
   * it leaked: end the whole authorization (RFC 9700 §4.14.2) and refuse it.
   * A rotated one past the lifetime it had as a refresh token is no longer
   * known (its hash is deleted, `findRotatedRefresh`): refused as unknown,
   * the authorization untouched, as an expired refresh token is.
   */
  async getRefreshToken(refreshToken: string): Promise<OAuth2Server.RefreshToken | null> {
    const hash = hashSecret(refreshToken);
    const row = await this.grants.findRefresh(hash);
    if (!row) {
      // Rotated, and its row superseded by the pair that replaced it.
      const grantId = await this.grants.findRotatedRefresh(hash);
      if (grantId !== null) await this.grants.endGrant(grantId);
      return null;
    }
    if (row.revokedAt) {
      await this.grants.endGrant(row.grantId);
      return null;
    }
    const client = await this.clients.findById(row.clientPk);
    if (!client) return null;
    return {
      id: row.id,
      refreshToken,
      refreshTokenExpiresAt: row.refreshExpiresAt ?? undefined,
      scope: row.scopes,
      client: toModelClient(client),
      user: { id: row.userId, grantId: row.grantId } satisfies ModelUser,
    };
  }

  /** Rotation: the pair is replaced by `saveToken`, with the new one stored. */
  async revokeToken(token: OAuth2Server.RefreshToken | OAuth2Server.Token): Promise<boolean> {
    (token.user as ModelUser).uses = { pair: token.id as number };
    return true;
  }

  /** Not used: the API's guard reads access tokens itself (`OAuthServerService.authenticateBearer`). */
  async getAccessToken(): Promise<null> {
    return null;
  }
}
