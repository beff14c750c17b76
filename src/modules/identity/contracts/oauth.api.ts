import type { Scope } from '../../../shared/domain/actor.js';

/** A registered application as its owner sees it. */
export interface OAuthClientSummary {
  id: number;
  clientId: string;
  name: string;
  redirectUris: string[];
  /** false = public client: no secret, PKCE (S256) required. */
  confidential: boolean;
  createdAt: string;
}

/**
 * An application a user authorized, as that user sees it: one entry for all
 * of the user's live authorizations of it (each approval on the consent page
 * is one; live = a token that still works or can be refreshed, or a code not
 * yet exchanged).
 */
export interface AuthorizedApp {
  /** The application's id (`OAuthClientSummary.id`), which `revokeAuthorizedApp` takes. */
  id: number;
  name: string;
  /** Every scope one of those authorizations holds now (a refresh may have narrowed it). */
  scopes: Scope[];
  /** When the earliest of them was approved (ISO 8601). */
  authorizedAt: string;
  /** When a token was last issued to it for this user (code exchange or refresh); null before the first. */
  lastIssuedAt: string | null;
}

export interface NewOAuthClient {
  name: string;
  redirectUris: string[];
  confidential: boolean;
}

/** Parameters of an authorization request, as sent on the query string or echoed by the consent form. */
export type AuthorizeParams = Record<string, unknown>;

/**
 * What to do with an authorization request.
 * - `fatal`: unknown client or redirect URI. Show an error page (400), never redirect.
 * - `redirect`: an answer for the application (an error, or the code after approval).
 * - `consent`: a valid request; ask the user.
 */
export type AuthorizationOutcome =
  | { kind: 'fatal'; message: string }
  | { kind: 'redirect'; location: string }
  | { kind: 'consent'; client: { clientId: string; name: string }; scopes: Scope[] };

/** A form-encoded request to the token or revocation endpoint, as the web layer received it. */
export interface OAuthEndpointRequest {
  method: string;
  headers: Record<string, string | string[] | undefined>;
  body: Record<string, unknown>;
}

/** The RFC 6749 / RFC 7009 answer to send back as JSON. */
export interface OAuthEndpointAnswer {
  status: number;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

/**
 * The OAuth 2.0 provider (DESIGN.md §3): applications, the Authorization Code
 * grant with PKCE, refresh rotation and revocation. Codes and tokens are stored hashed.
 */
export abstract class OAuthApi {
  /** Registers an application; `clientSecret` (confidential clients only) is returned this once. */
  abstract registerClient(ownerId: number, input: NewOAuthClient): Promise<{ client: OAuthClientSummary; clientSecret: string | null }>;
  abstract listClients(ownerId: number): Promise<OAuthClientSummary[]>;
  /** A new secret for a confidential client; the old one stops working at once. */
  abstract rotateClientSecret(ownerId: number, id: number): Promise<string>;
  /** Deletes an application and every code and token issued to it. */
  abstract deleteClient(ownerId: number, id: number): Promise<void>;
  /** The applications `userId` authorized and has not revoked, earliest first. */
  abstract authorizedApps(userId: number): Promise<AuthorizedApp[]>;
  /**
   * Ends every authorization `userId` gave the application `id`: its access
   * and refresh tokens stop working at once, and a code not yet exchanged can
   * no longer be. Nothing to end (none, or already revoked) is not an error.
   */
  abstract revokeAuthorizedApp(userId: number, id: number): Promise<void>;
  /** Checks a request before any login or consent: client and redirect URI first, then the rest. */
  abstract checkAuthorization(params: AuthorizeParams): Promise<AuthorizationOutcome>;
  /** The user approved: issue a code and answer the redirect carrying it (and `state`). */
  abstract approve(params: AuthorizeParams, userId: number): Promise<AuthorizationOutcome>;
  /** The user refused: answer the redirect carrying `access_denied`. */
  abstract deny(params: AuthorizeParams): Promise<AuthorizationOutcome>;
  /** `POST /oauth/token`: authorization_code and refresh_token grants. */
  abstract token(request: OAuthEndpointRequest): Promise<OAuthEndpointAnswer>;
  /** `POST /oauth/revoke` (RFC 7009): ends the authorization the token belongs to. */
  abstract revoke(request: OAuthEndpointRequest): Promise<OAuthEndpointAnswer>;
}
