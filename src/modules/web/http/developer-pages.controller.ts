import { Controller, Get, Param, Post, Req, Res, UseFilters } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { DomainError } from '../../../shared/domain/domain-error.js';
import { Public } from '../../../shared/http/actor.decorator.js';
import { ParseIdPipe } from '../../../shared/http/parse-id.pipe.js';
import { OAuthApi } from '../../identity/index.js';
import { developerPage } from '../views/pages.js';
import { WebErrorFilter } from './web-error.filter.js';
import { field, WebContextService } from './web-context.js';

/** The form's application types; anything else is refused, not taken for one of them. */
const CLIENT_TYPES: Record<string, boolean> = { confidential: true, public: false };

/** The developer page: register, list, rotate and delete OAuth applications. */
@ApiExcludeController()
@Public()
@UseFilters(WebErrorFilter)
@Controller('developer')
export class DeveloperPagesController {
  constructor(
    private readonly web: WebContextService,
    private readonly oauth: OAuthApi,
  ) {}

  @Get()
  async page(@Req() req: Request, @Res() res: Response) {
    const ctx = await this.web.accountPage(req, res, '/developer');
    if (!ctx) return;
    this.web.send(res, 200, developerPage(ctx, await this.oauth.listClients(ctx.account.id), {}));
  }

  /** The client secret is in this answer only. */
  @Post('apps')
  async register(@Req() req: Request, @Res() res: Response) {
    const ctx = await this.web.accountForm(req, res, '/developer');
    if (!ctx) return;
    const form = { name: field(req, 'name'), redirect_uris: field(req, 'redirect_uris'), client_type: field(req, 'client_type') };
    const confidential = Object.hasOwn(CLIENT_TYPES, form.client_type) ? CLIENT_TYPES[form.client_type] : undefined;
    if (confidential === undefined) {
      const apps = await this.oauth.listClients(ctx.account.id);
      return this.web.send(res, 400, developerPage(ctx, apps, { error: 'Type must be confidential or public.', form }));
    }
    try {
      const { client, clientSecret } = await this.oauth.registerClient(ctx.account.id, {
        name: form.name,
        redirectUris: form.redirect_uris.split(/\r?\n/),
        confidential,
      });
      const apps = await this.oauth.listClients(ctx.account.id);
      this.web.send(res, 201, developerPage(ctx, apps, { shown: { app: client, secret: clientSecret, what: 'registered' } }));
    } catch (error) {
      if (!(error instanceof DomainError) || error.kind !== 'invalid') throw error;
      this.web.send(res, 400, developerPage(ctx, await this.oauth.listClients(ctx.account.id), { error: error.message, form }));
    }
  }

  @Post('apps/:id/rotate-secret')
  async rotate(@Req() req: Request, @Res() res: Response, @Param('id', ParseIdPipe) id: number) {
    const ctx = await this.web.accountForm(req, res, '/developer');
    if (!ctx) return;
    const secret = await this.oauth.rotateClientSecret(ctx.account.id, id);
    const apps = await this.oauth.listClients(ctx.account.id);
    const app = apps.find((a) => a.id === id)!;
    this.web.send(res, 200, developerPage(ctx, apps, { shown: { app, secret, what: 'rotated' } }));
  }

  @Post('apps/:id/delete')
  async remove(@Req() req: Request, @Res() res: Response, @Param('id', ParseIdPipe) id: number) {
    const ctx = await this.web.accountForm(req, res, '/developer');
    if (!ctx) return;
    await this.oauth.deleteClient(ctx.account.id, id);
    res.redirect(303, '/developer');
  }
}
