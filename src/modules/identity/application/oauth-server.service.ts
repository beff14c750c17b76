import { Injectable, Logger } from '@nestjs/common';
import OAuth2Server from '@node-oauth/oauth2-server';
import type { Actor, Scope } from '../../../shared/domain/actor.js';
import { DATABASE_RETRY_AFTER_SECONDS, isDatabaseUnavailable } from '../../../shared/persistence/database-availability.js';
import type {
  AuthorizationOutcome,
  AuthorizeParams,
  OAuthEndpointAnswer,
  OAuthEndpointRequest,
} from '../contracts/oauth.api.js';
import { hasUnsafeText } from '../../../shared/domain/safe-text.js';
import { isScope } from '../auth/scope.policy.js';
import { isRegisteredRedirectUri } from '../domain/redirect-uri.js';
import { hashSecret } from '../domain/secrets.js';
import { OAuthClientsRepository } from '../infrastructure/oauth-clients.repository.js';
import { OAuthGrantsRepository } from '../infrastructure/oauth-grants.repository.js';
import { ACCESS_TOKEN_PREFIX, GRANT_TYPES, OAuthModel, PKCE_VALUE, toModelClient, type ModelClient } from './oauth.model.js';

const CODE_LIFETIME_S = 10 * 60;
const ACCESS_TOKEN_LIFETIME_S = 60 * 60;
const REFRESH_TOKEN_LIFETIME_S = 30 * 24 * 60 * 60;
/**
 * RFC 6749 `state`: printable ASCII (what the library accepts), returned as
 * sent; an empty one too (`state=`, which many clients send for none).
 */
const STATE_VALUE = /^[\x20-\x7e]{0,500}$/;

type RequestCheck =
  | { kind: 'fatal'; message: string }
  | { kind: 'redirect'; location: string }
  | { kind: 'valid'; client: ModelClient; redirectUri: string; scopes: Scope[]; state?: string; challenge?: string };

/** The Authorization Code flow around `@node-oauth/oauth2-server` (DESIGN.md §3). */
@Injectable()
export class OAuthServerService {
  private readonly logger = new Logger('OAuth');
  private readonly server: OAuth2Server;

  constructor(
    private readonly model: OAuthModel,
    private readonly clients: OAuthClientsRepository,
    private readonly grants: OAuthGrantsRepository,
  ) {
    this.server = new OAuth2Server({
      model,
      accessTokenLifetime: ACCESS_TOKEN_LIFETIME_S,
      refreshTokenLifetime: REFRESH_TOKEN_LIFETIME_S,
      authorizationCodeLifetime: CODE_LIFETIME_S,
      allowEmptyState: true,
      alwaysIssueNewRefreshToken: true,
      // A public client refreshes with its client_id alone (the model refuses a
      // confidential client that sends no secret).
      requireClientAuthentication: { authorization_code: true, refresh_token: false },
    });
  }

  async checkAuthorization(params: AuthorizeParams): Promise<AuthorizationOutcome> {
    const check = await this.check(params);
    if (check.kind !== 'valid') return check;
    return { kind: 'consent', client: { clientId: check.client.id, name: check.client.name }, scopes: check.scopes };
  }

  /** Issues the code through the library, which also stores the PKCE challenge. */
  async approve(params: AuthorizeParams, userId: number): Promise<AuthorizationOutcome> {
    const check = await this.check(params);
    if (check.kind !== 'valid') return check;
    const body: Record<string, string> = {
      response_type: 'code',
      client_id: check.client.id,
      redirect_uri: check.redirectUri,
      scope: check.scopes.join(' '),
    };
    if (check.state !== undefined) body.state = check.state;
    if (check.challenge !== undefined) Object.assign(body, { code_challenge: check.challenge, code_challenge_method: 'S256' });
    const response = new OAuth2Server.Response();
    try {
      await this.server.authorize(new OAuth2Server.Request({ method: 'POST', headers: {}, query: {}, body }), response, {
        authenticateHandler: { handle: () => ({ id: userId }) },
        model: this.modelKnowing(check.client, check.redirectUri),
      } as OAuth2Server.AuthorizeOptions);
    } catch (error) {
      this.logger.error(`authorization failed after the pre-check: ${String(error)}`);
      return { kind: 'redirect', location: errorRedirect(check.redirectUri, 'server_error', 'The authorization failed', check.state) };
    }
    return { kind: 'redirect', location: withEmptyState(response.get('location') as string, check.state) };
  }

  /**
   * The model with the client and the redirect URI the pre-check found: at
   * this step no secret is involved, and the URI may be a stored one's
   * parsed form (`isRegisteredRedirectUri`), which the stored list lacks.
   */
  private modelKnowing(client: ModelClient, redirectUri: string): OAuth2Server.AuthorizationCodeModel {
    const model = Object.create(this.model) as OAuthModel;
    model.getClient = async () => client;
    model.validateRedirectUri = async (uri: string) => uri === redirectUri;
    return model;
  }

  async deny(params: AuthorizeParams): Promise<AuthorizationOutcome> {
    const check = await this.check(params);
    if (check.kind !== 'valid') return check;
    return { kind: 'redirect', location: errorRedirect(check.redirectUri, 'access_denied', 'The user denied access', check.state) };
  }

  async token(request: OAuthEndpointRequest): Promise<OAuthEndpointAnswer> {
    const refused = malformedParameters(request);
    if (refused) return refused;
    if (unsupportedGrant(request)) {
      return oauthError(400, 'unsupported_grant_type', `Unsupported grant type: this server issues tokens for ${GRANT_TYPES.join(' and ')}`);
    }
    const response = new OAuth2Server.Response();
    try {
      await this.server.token(libraryRequest(request), response, { model: this.model.forTokenRequest(request.body) } as OAuth2Server.TokenOptions);
    } catch (error) {
      if (!(error instanceof OAuth2Server.OAuthError) || error.code >= 500) {
        if (databaseAway(error)) return DATABASE_AWAY;
        this.logger.error(`token endpoint failed: ${String(error)}`);
        return oauthError(500, 'server_error', 'The token request failed');
      }
      // Errors found before the library's own try block (method, content type) leave `response` untouched.
      if (response.status === 200) return oauthError(error.code, error.name, error.message);
    }
    const answer = endpointAnswer(response);
    // The library answers the whole seconds left when it answers (3599, the token being a few ms old):
    // RFC 6749 §5.1's expires_in is the lifetime the token was issued with.
    if (answer.status === 200 && typeof answer.body.expires_in === 'number') answer.body.expires_in = ACCESS_TOKEN_LIFETIME_S;
    return withClientChallenge(request, answer);
  }

  /**
   * RFC 7009: the client authenticates like at the token endpoint; an unknown
   * token is not an error. A failure is a `server_error` in RFC 6749 JSON, as
   * the library answers it at the token endpoint; the database away is a 503
   * `temporarily_unavailable` with `Retry-After` at both.
   */
  async revoke(request: OAuthEndpointRequest): Promise<OAuthEndpointAnswer> {
    try {
      return await this.revokeFor(request);
    } catch (error) {
      if (databaseAway(error)) return DATABASE_AWAY;
      this.logger.error(`revocation endpoint failed: ${String(error)}`);
      return oauthError(500, 'server_error', 'The revocation request failed');
    }
  }

  private async revokeFor(request: OAuthEndpointRequest): Promise<OAuthEndpointAnswer> {
    const refused = malformedParameters(request);
    if (refused) return refused;
    const { clientId, clientSecret } = clientCredentials(request);
    const client = clientId ? await this.model.getClient(clientId, clientSecret) : null;
    if (!client) return invalidClient(request, clientId ? 'Invalid client: client is invalid' : 'Invalid client: cannot retrieve client credentials');
    const token = request.body.token;
    if (typeof token !== 'string' || !token) return oauthError(400, 'invalid_request', 'Missing parameter: `token`');
    const grantId = await this.grants.grantOfToken(hashSecret(token), client.pk);
    if (grantId !== null) await this.grants.endGrant(grantId);
    return { status: 200, headers: { 'Cache-Control': 'no-store' }, body: {} };
  }

  /** The caller an access token stands for, with its scopes; null when unknown, expired or revoked. */
  async authenticateBearer(token: string): Promise<Actor | null> {
    if (!token.startsWith(ACCESS_TOKEN_PREFIX) || token.length > 200) return null;
    return this.grants.actorOfAccessToken(hashSecret(token));
  }

  /**
   * Client and redirect URI first (a failure there is shown, never redirected
   * to); then the rest, reported to the application on its redirect URI.
   */
  private async check(params: AuthorizeParams): Promise<RequestCheck> {
    const clientId = params.client_id;
    if (typeof clientId !== 'string' || !clientId) return { kind: 'fatal', message: 'The request names no application (client_id).' };
    const row = await this.clients.findByClientId(clientId);
    if (!row) return { kind: 'fatal', message: 'No application is registered with this client_id.' };
    const redirectUri = params.redirect_uri;
    if (typeof redirectUri !== 'string' || !redirectUri) {
      return { kind: 'fatal', message: 'The request has no redirect_uri; it is required.' };
    }
    if (!isRegisteredRedirectUri(row.redirectUris, redirectUri)) {
      return { kind: 'fatal', message: 'The redirect_uri is not one the application registered (they must match exactly).' };
    }
    const client = toModelClient(row);
    const rawState = params.state;
    const state = typeof rawState === 'string' && STATE_VALUE.test(rawState) ? rawState : undefined;
    const fail = (error: string, description: string): RequestCheck => ({
      kind: 'redirect',
      location: errorRedirect(redirectUri, error, description, state),
    });
    if (rawState !== undefined && state === undefined) return fail('invalid_request', 'Invalid parameter: state');
    if (params.response_type !== 'code') {
      return params.response_type === undefined
        ? fail('invalid_request', 'Missing parameter: response_type')
        : fail('unsupported_response_type', 'Only response_type=code is supported');
    }
    const scopes = typeof params.scope === 'string' ? params.scope.trim().split(/\s+/).filter(Boolean) : [];
    if (!scopes.length || !scopes.every(isScope)) {
      return fail('invalid_scope', 'scope must name one or more of read_user, read_workspace, write_workspace');
    }
    const { code_challenge: challenge, code_challenge_method: method } = params;
    if (method !== undefined && method !== 'S256') return fail('invalid_request', 'code_challenge_method must be S256');
    if (challenge === undefined) {
      if (method !== undefined) return fail('invalid_request', 'Missing parameter: code_challenge');
      if (!client.confidential) return fail('invalid_request', 'PKCE (code_challenge with S256) is required for public clients');
    } else if (typeof challenge !== 'string' || !PKCE_VALUE.test(challenge)) {
      return fail('invalid_request', 'Invalid parameter: code_challenge');
    }
    return { kind: 'valid', client, redirectUri, scopes: [...new Set(scopes as Scope[])], state, challenge: challenge as string | undefined };
  }
}

/**
 * The library's redirect with an empty `state` the request sent (RFC 6749
 * §4.1.2: the exact value received), which the library leaves out.
 */
function withEmptyState(location: string, state: string | undefined): string {
  const url = new URL(location);
  if (state !== '' || url.searchParams.has('state')) return location;
  url.search = url.search ? `${url.search}&state=` : '?state=';
  return url.href;
}

/** The redirect URI with the error (and `state`) added to its query, whatever query it already has. */
function errorRedirect(redirectUri: string, error: string, description: string, state?: string): string {
  const url = new URL(redirectUri);
  url.searchParams.set('error', error);
  url.searchParams.set('error_description', description);
  if (state !== undefined) url.searchParams.set('state', state);
  return url.toString();
}

/**
 * A well-formed token request for a grant this server does not have
 * (`password`, `client_credentials`): RFC 6749 §5.2 `unsupported_grant_type`.
 * The library looks at the client's own grant list first and answered
 * `unauthorized_client`, which says the client could be allowed it.
 */
function unsupportedGrant(r: OAuthEndpointRequest): boolean {
  const grantType = r.body.grant_type;
  const form = typeof r.headers['content-type'] === 'string' && r.headers['content-type'].toLowerCase().startsWith('application/x-www-form-urlencoded');
  return r.method === 'POST' && form && typeof grantType === 'string' && grantType !== '' && !GRANT_TYPES.includes(grantType);
}

function libraryRequest(r: OAuthEndpointRequest): OAuth2Server.Request {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(r.headers)) if (typeof v === 'string') headers[k] = v;
  return new OAuth2Server.Request({ method: r.method, headers, query: {}, body: r.body });
}

function endpointAnswer(response: OAuth2Server.Response): OAuthEndpointAnswer {
  const headers: Record<string, string> = { 'Cache-Control': 'no-store', Pragma: 'no-cache' };
  for (const [k, v] of Object.entries(response.headers ?? {})) {
    headers[k] = k === 'www-authenticate' ? 'Basic realm="cardwork"' : String(v);
  }
  return { status: response.status ?? 500, headers, body: (response.body ?? {}) as Record<string, unknown> };
}

function oauthError(status: number, error: string, description: string): OAuthEndpointAnswer {
  return { status, headers: { 'Cache-Control': 'no-store' }, body: { error, error_description: description } };
}

/**
 * A failure because the database cannot serve now. The library wraps a
 * model's error in its ServerError as `inner`, or as its `message` when the
 * error fails its `instanceof Error` (made in another realm: a test runner's).
 */
function databaseAway(error: unknown): boolean {
  const e = error as { inner?: unknown; message?: unknown } | null;
  return [e?.inner, e?.message, error].some(isDatabaseUnavailable);
}

/** RFC 6749 §4.1.2.1's code for a server that may serve again shortly, with when to retry, as the API's 503s. */
const DATABASE_AWAY: OAuthEndpointAnswer = {
  status: 503,
  headers: { 'Cache-Control': 'no-store', 'Retry-After': String(DATABASE_RETRY_AFTER_SECONDS) },
  body: { error: 'temporarily_unavailable', error_description: 'The database cannot serve now; retry after Retry-After seconds' },
};

function invalidClient(r: OAuthEndpointRequest, description: string): OAuthEndpointAnswer {
  return withClientChallenge(r, oauthError(400, 'invalid_client', description));
}

/**
 * RFC 6749 §5.2: `invalid_client` for a request that sent an Authorization
 * header is 401 with a challenge. The library does so only for a client it
 * looked up and refused, not for a header it could not read (no colon, not
 * Basic), which it answered 400.
 */
function withClientChallenge(r: OAuthEndpointRequest, answer: OAuthEndpointAnswer): OAuthEndpointAnswer {
  if (answer.status !== 400 || answer.body.error !== 'invalid_client' || r.headers.authorization === undefined) return answer;
  return { status: 401, headers: { ...answer.headers, 'WWW-Authenticate': 'Basic realm="cardwork"' }, body: answer.body };
}

/**
 * `invalid_request` for a parameter the endpoints cannot read: one holding
 * text PostgreSQL cannot store, or one sent more than once (RFC 6749 §3.1,
 * which the form parser hands over as an array, and the library and the
 * model took for a string); or client credentials sent two ways
 * (`credentialsTwoWays`). Checked before the library runs, so the request
 * changes nothing: the code or the refresh token it names stays usable.
 */
function malformedParameters(r: OAuthEndpointRequest): OAuthEndpointAnswer | undefined {
  const unsafe = unsafeParameter(r);
  if (unsafe) return oauthError(400, 'invalid_request', `Invalid parameter: \`${unsafe}\``);
  const repeated = Object.keys(r.body).find((name) => Array.isArray(r.body[name]));
  if (repeated !== undefined) {
    return oauthError(400, 'invalid_request', `Invalid parameter: \`${repeated}\` is sent more than once (RFC 6749 section 3.1)`);
  }
  return credentialsTwoWays(r);
}

/**
 * RFC 6749 §2.3: a client uses one authentication method per request. With
 * an HTTP Basic header the library reads the header and ignores the form, so
 * a `client_secret` beside it, or a `client_id` naming another client, was
 * let through unread; both are refused. A `client_id` equal to the header's
 * is what many clients send (§4.1.3) and stays allowed. A Basic header that
 * cannot be read is a failed authentication (`invalid_client`, 401), not a
 * reason to fall back to the form's `client_id`, as the library did.
 */
function credentialsTwoWays(r: OAuthEndpointRequest): OAuthEndpointAnswer | undefined {
  const basic = basicCredentials(r.headers.authorization);
  if (!basic) return undefined;
  if (r.body.client_secret !== undefined) {
    return oauthError(400, 'invalid_request', 'Client credentials are sent two ways, in the Authorization header (HTTP Basic) and the `client_secret` form field: use one (RFC 6749 section 2.3)');
  }
  if (basic.clientId === undefined) return invalidClient(r, 'Invalid client: cannot retrieve client credentials');
  if (r.body.client_id !== undefined && r.body.client_id !== basic.clientId) {
    return oauthError(400, 'invalid_request', 'Invalid parameter: `client_id` is not the client the Authorization header (HTTP Basic) names');
  }
  return undefined;
}

/**
 * The first parameter (form field, or a client credential from the Basic
 * header) holding a character PostgreSQL text cannot store, such as NUL. The
 * app's check for such strings leaves these endpoints to this one, so that
 * they answer RFC 6749 JSON like for any other malformed parameter.
 */
function unsafeParameter(r: OAuthEndpointRequest): string | undefined {
  for (const [name, value] of Object.entries(r.body)) {
    const values: unknown[] = Array.isArray(value) ? value : [value];
    if (hasUnsafeText(name)) return name.replace(/[^\x20-\x7e]/g, '?');
    if (values.some((v) => typeof v === 'string' && hasUnsafeText(v))) return name;
  }
  const { clientId, clientSecret, viaHeader } = clientCredentials(r);
  if (viaHeader && hasUnsafeText(clientId ?? '')) return 'client_id';
  if (viaHeader && hasUnsafeText(clientSecret ?? '')) return 'client_secret';
  return undefined;
}

/** Client credentials by HTTP Basic (`client_id:client_secret`) or form fields. */
function clientCredentials(r: OAuthEndpointRequest): { clientId?: string; clientSecret?: string; viaHeader: boolean } {
  const basic = basicCredentials(r.headers.authorization);
  if (basic) return { ...basic, viaHeader: true };
  const { client_id: id, client_secret: secret } = r.body;
  return {
    clientId: typeof id === 'string' ? id : undefined,
    clientSecret: typeof secret === 'string' && secret ? secret : undefined,
    viaHeader: false,
  };
}

/**
 * The header and the decoded `id:secret` as the `basic-auth` package the
 * library uses reads them, so that what is checked here is what the library
 * authenticates (it takes `-_.~` in the base64 and no line break in the pair).
 */
const BASIC_HEADER = /^ *(?:[Bb][Aa][Ss][Ii][Cc]) +([A-Za-z0-9._~+/-]+=*) *$/;
const BASIC_PAIR = /^([^:]*):(.*)$/;

/**
 * The credentials of an `Authorization: Basic` header: undefined when there
 * is none (or another scheme), no `clientId` when it cannot be read.
 */
function basicCredentials(header: string | string[] | undefined): { clientId?: string; clientSecret?: string } | undefined {
  if (typeof header !== 'string' || !/^\s*basic(\s|$)/i.test(header)) return undefined;
  const encoded = BASIC_HEADER.exec(header)?.[1];
  const pair = encoded === undefined ? null : BASIC_PAIR.exec(Buffer.from(encoded, 'base64').toString('utf8'));
  if (!pair) return {};
  return { clientId: pair[1], clientSecret: pair[2] || undefined };
}
