import { Module } from '@nestjs/common';
import { APP_GUARD, DiscoveryModule } from '@nestjs/core';
import { PassportModule } from '@nestjs/passport';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AccountsApiImpl } from './application/accounts.api-impl.js';
import { ApiKeysService } from './application/api-keys.service.js';
import { AuthorizedAppsService } from './application/authorized-apps.service.js';
import { IdentityAdminApiImpl } from './application/identity-admin.api-impl.js';
import { IdentityApiImpl } from './application/identity.api-impl.js';
import { OAuthClientsService } from './application/oauth-clients.service.js';
import { OAuthApiImpl } from './application/oauth.api-impl.js';
import { OAuthModel } from './application/oauth.model.js';
import { OAuthServerService } from './application/oauth-server.service.js';
import { UsersService } from './application/users.service.js';
import { ApiKeyBasicStrategy } from './auth/api-key-basic.strategy.js';
import { ApiKeyHeaderStrategy } from './auth/api-key-header.strategy.js';
import { EarlyKeyLookup } from './auth/early-key-lookup.js';
import { AuthenticationGuard } from './auth/authentication.guard.js';
import { RouteScopesCheck } from './auth/route-scopes.check.js';
import { AccountsApi } from './contracts/accounts.api.js';
import { IdentityAdminApi } from './contracts/identity-admin.api.js';
import { IdentityApi } from './contracts/identity.api.js';
import { OAuthApi } from './contracts/oauth.api.js';
import { ApiKey } from './domain/api-key.entity.js';
import { User } from './domain/user.entity.js';
import { IdempotencyKeyGuard } from './http/idempotency-key.guard.js';
import { MeController } from './http/me.controller.js';
import { ApiKeysRepository } from './infrastructure/api-keys.repository.js';
import { IdempotencyKeysStore } from './infrastructure/idempotency-keys.store.js';
import { RateLimitStore } from './infrastructure/rate-limit.store.js';
import { OAuthClientsRepository } from './infrastructure/oauth-clients.repository.js';
import { OAuthGrantsRepository } from './infrastructure/oauth-grants.repository.js';
import { UsersRepository } from './infrastructure/users.repository.js';

/**
 * Users and every credential that names one: API keys and OAuth 2.0 grants
 * (applications, codes, tokens). The request guard verifies both kinds, so
 * the tokens live here rather than downstream (no upstream call, STYLE.md §2).
 */
@Module({
  imports: [TypeOrmModule.forFeature([User, ApiKey]), PassportModule, DiscoveryModule],
  controllers: [MeController],
  providers: [
    UsersRepository,
    ApiKeysRepository,
    OAuthClientsRepository,
    OAuthGrantsRepository,
    UsersService,
    ApiKeysService,
    OAuthClientsService,
    AuthorizedAppsService,
    OAuthModel,
    OAuthServerService,
    EarlyKeyLookup,
    ApiKeyBasicStrategy,
    ApiKeyHeaderStrategy,
    RateLimitStore,
    RouteScopesCheck,
    IdempotencyKeysStore,
    { provide: APP_GUARD, useClass: AuthenticationGuard },
    // After the authentication guard: a 401 comes first, and keys are per user.
    { provide: APP_GUARD, useClass: IdempotencyKeyGuard },
    { provide: IdentityApi, useClass: IdentityApiImpl },
    { provide: IdentityAdminApi, useClass: IdentityAdminApiImpl },
    { provide: AccountsApi, useClass: AccountsApiImpl },
    { provide: OAuthApi, useClass: OAuthApiImpl },
  ],
  exports: [IdentityApi, IdentityAdminApi, AccountsApi, OAuthApi],
})
export class IdentityModule {}

/**
 * The user and key use cases without HTTP, for the CLI (which must not start
 * the guard or the controllers).
 */
@Module({
  imports: [TypeOrmModule.forFeature([User, ApiKey])],
  providers: [
    UsersRepository,
    ApiKeysRepository,
    UsersService,
    ApiKeysService,
    { provide: IdentityAdminApi, useClass: IdentityAdminApiImpl },
  ],
  exports: [IdentityAdminApi],
})
export class IdentityAdminModule {}
