import { Injectable } from '@nestjs/common';
import {
  OAuthApi,
  type AuthorizationOutcome,
  type AuthorizeParams,
  type AuthorizedApp,
  type NewOAuthClient,
  type OAuthClientSummary,
  type OAuthEndpointAnswer,
  type OAuthEndpointRequest,
} from '../contracts/oauth.api.js';
import { AuthorizedAppsService } from './authorized-apps.service.js';
import { OAuthClientsService } from './oauth-clients.service.js';
import { OAuthServerService } from './oauth-server.service.js';

@Injectable()
export class OAuthApiImpl extends OAuthApi {
  constructor(
    private readonly clients: OAuthClientsService,
    private readonly server: OAuthServerService,
    private readonly authorized: AuthorizedAppsService,
  ) {
    super();
  }

  registerClient(ownerId: number, input: NewOAuthClient): Promise<{ client: OAuthClientSummary; clientSecret: string | null }> {
    return this.clients.register(ownerId, input);
  }

  listClients(ownerId: number): Promise<OAuthClientSummary[]> {
    return this.clients.list(ownerId);
  }

  rotateClientSecret(ownerId: number, id: number): Promise<string> {
    return this.clients.rotateSecret(ownerId, id);
  }

  deleteClient(ownerId: number, id: number): Promise<void> {
    return this.clients.delete(ownerId, id);
  }

  authorizedApps(userId: number): Promise<AuthorizedApp[]> {
    return this.authorized.list(userId);
  }

  revokeAuthorizedApp(userId: number, id: number): Promise<void> {
    return this.authorized.revoke(userId, id);
  }

  checkAuthorization(params: AuthorizeParams): Promise<AuthorizationOutcome> {
    return this.server.checkAuthorization(params);
  }

  approve(params: AuthorizeParams, userId: number): Promise<AuthorizationOutcome> {
    return this.server.approve(params, userId);
  }

  deny(params: AuthorizeParams): Promise<AuthorizationOutcome> {
    return this.server.deny(params);
  }

  token(request: OAuthEndpointRequest): Promise<OAuthEndpointAnswer> {
    return this.server.token(request);
  }

  revoke(request: OAuthEndpointRequest): Promise<OAuthEndpointAnswer> {
    return this.server.revoke(request);
  }
}
