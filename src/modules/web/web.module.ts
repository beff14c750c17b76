import { Module } from '@nestjs/common';
import { IdentityModule } from '../identity/index.js';
import { FormSubmissionsService } from './application/form-submissions.service.js';
import { SessionsService } from './application/sessions.service.js';
import { AccountPagesController } from './http/account-pages.controller.js';
import { DeveloperPagesController } from './http/developer-pages.controller.js';
import { OAuthPagesController } from './http/oauth-pages.controller.js';
import { PageMethodsController } from './http/page-methods.controller.js';
import { WebContextService } from './http/web-context.js';
import { WebErrorFilter } from './http/web-error.filter.js';
import { FormSubmissionsRepository } from './infrastructure/form-submissions.repository.js';
import { SessionsRepository } from './infrastructure/sessions.repository.js';

/**
 * What AUTH_URL serves to people and to OAuth clients: server-rendered pages
 * (sign-up, login, account, developer, consent) with database sessions and
 * CSRF protection, and the OAuth 2.0 endpoints. The OAuth state itself
 * (applications, codes, tokens) belongs to identity, which verifies tokens on
 * every API call; this module only talks to it through its API.
 */
@Module({
  imports: [IdentityModule],
  // PageMethodsController last: its routes take what the pages' routes leave (a method they do not take).
  controllers: [AccountPagesController, DeveloperPagesController, OAuthPagesController, PageMethodsController],
  providers: [SessionsRepository, SessionsService, FormSubmissionsRepository, FormSubmissionsService, WebContextService, WebErrorFilter],
})
export class WebModule {}
