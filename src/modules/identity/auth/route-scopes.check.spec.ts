import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { Controller, Get, Post } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { Public } from '../../../shared/http/actor.decorator.js';
import { RequiresScope, WorkspaceRoutes } from '../../../shared/http/scopes.decorator.js';
import { MissingScopeDeclarationError, RouteScopesCheck } from './route-scopes.check.js';

@WorkspaceRoutes()
@Controller('declared')
class DeclaredController {
  @Get()
  read() {}

  @Get('me')
  @RequiresScope('read_user')
  me() {}
}

@Controller('open')
class PublicRoutesController {
  @Public()
  @Get()
  health() {}
}

@Controller('forgotten')
class ForgottenController {
  @Get()
  @RequiresScope('read_workspace')
  declared() {}

  @Post()
  undeclared() {}
}

async function boot(...controllers: Array<new () => object>) {
  const module = await Test.createTestingModule({ imports: [DiscoveryModule], controllers, providers: [RouteScopesCheck] }).compile();
  const app = module.createNestApplication({ logger: false });
  try {
    await app.init();
    return module.get(RouteScopesCheck).declarations();
  } finally {
    await app.close();
  }
}

describe('RouteScopesCheck', () => {
  it('lets the app start when every route declares a scope or is public, method rules overriding class rules', async () => {
    const found = await boot(DeclaredController, PublicRoutesController);
    expect(found).toEqual(
      expect.arrayContaining([
        { controller: 'DeclaredController', handler: 'read', rule: 'workspace' },
        { controller: 'DeclaredController', handler: 'me', rule: 'read_user' },
        { controller: 'PublicRoutesController', handler: 'health', rule: 'public' },
      ]),
    );
  });

  it('stops the start-up naming the route that declares no scope', async () => {
    const failure = boot(DeclaredController, ForgottenController);
    await expect(failure).rejects.toBeInstanceOf(MissingScopeDeclarationError);
    await expect(failure).rejects.toThrow(/ForgottenController\.undeclared$/);
  });
});
