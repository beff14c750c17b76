import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { PassportModule } from '@nestjs/passport';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ApiKeysService } from './application/api-keys.service.js';
import { IdentityAdminApiImpl } from './application/identity-admin.api-impl.js';
import { IdentityApiImpl } from './application/identity.api-impl.js';
import { UsersService } from './application/users.service.js';
import { ApiKeyBasicStrategy } from './auth/api-key-basic.strategy.js';
import { ApiKeyHeaderStrategy } from './auth/api-key-header.strategy.js';
import { AuthenticationGuard } from './auth/authentication.guard.js';
import { IdentityAdminApi } from './contracts/identity-admin.api.js';
import { IdentityApi } from './contracts/identity.api.js';
import { ApiKey } from './domain/api-key.entity.js';
import { User } from './domain/user.entity.js';
import { MeController } from './http/me.controller.js';
import { ApiKeysRepository } from './infrastructure/api-keys.repository.js';
import { RateLimitStore } from './infrastructure/rate-limit.store.js';
import { UsersRepository } from './infrastructure/users.repository.js';

@Module({
  imports: [TypeOrmModule.forFeature([User, ApiKey]), PassportModule],
  controllers: [MeController],
  providers: [
    UsersRepository,
    ApiKeysRepository,
    UsersService,
    ApiKeysService,
    ApiKeyBasicStrategy,
    ApiKeyHeaderStrategy,
    RateLimitStore,
    { provide: APP_GUARD, useClass: AuthenticationGuard },
    { provide: IdentityApi, useClass: IdentityApiImpl },
    { provide: IdentityAdminApi, useClass: IdentityAdminApiImpl },
  ],
  exports: [IdentityApi, IdentityAdminApi],
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
