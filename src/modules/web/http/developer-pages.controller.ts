import { Controller, Get, Param, Post, Req, Res, UseFilters } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { DomainError } from '../../../shared/domain/domain-error.js';
import { Public } from '../../../shared/http/actor.decorator.js';
import { ParseIdPipe } from '../../../shared/http/parse-id.pipe.js';
import { OAuthApi } from '../../identity/index.js';
import { FormSubmissionsService } from '../application/form-submissions.service.js';
import { developerPage } from '../views/pages.js';
import { WebErrorFilter } from './web-error.filter.js';
import { errorField, field, WebContextService } from './web-context.js';

/** The form's application types; anything else is refused, not taken for one of them. */
const CLIENT_TYPES: Record<string, boolean> = { confidential: true, public: false };

/** What `/developer?done=…` says after a form sent again: fixed texts only. */
const NOTICES = new Map([
  [
    'app-resent',
    'This form was already sent: the application was registered and is in the list below. Its client secret was shown only once, in the answer to the first send; if you did not copy it, rotate the secret.',
  ],
  [
    'secret-resent',
    'This form was already sent: the secret was rotated once, and the secret shown in the answer to that send is the one that works. If you did not copy it, rotate again.',
  ],
]);

/** The developer page: register, list, rotate and delete OAuth applications. */
@ApiExcludeController()
@Public()
@UseFilters(WebErrorFilter)
@Controller('developer')
export class DeveloperPagesController {
  constructor(
    private readonly web: WebContextService,
    private readonly oauth: OAuthApi,
    private readonly forms: FormSubmissionsService,
  ) {}

  @Get()
  async page(@Req() req: Request, @Res() res: Response) {
    const ctx = await this.web.accountPage(req, res, '/developer');
    if (!ctx) return;
    const notice = NOTICES.get(String(req.query.done));
    this.web.send(res, 200, developerPage(ctx, await this.oauth.listClients(ctx.account.id), { notice }));
  }

  /** The client secret is in this answer only; the same form sent again registers nothing (303 to the list, which says so). */
  @Post('apps')
  async register(@Req() req: Request, @Res() res: Response) {
    const ctx = await this.web.accountForm(req, res, '/developer');
    if (!ctx) return;
    const form = { name: field(req, 'name'), redirect_uris: field(req, 'redirect_uris'), client_type: field(req, 'client_type') };
    const confidential = Object.hasOwn(CLIENT_TYPES, form.client_type) ? CLIENT_TYPES[form.client_type] : undefined;
    if (confidential === undefined) {
      const apps = await this.oauth.listClients(ctx.account.id);
      return this.web.send(res, 400, developerPage(ctx, apps, { error: 'Type must be confidential or public.', errorField: 'client_type', form }));
    }
    try {
      const input = { name: form.name, redirectUris: form.redirect_uris.split(/\r?\n/), confidential };
      const first = await this.forms.once(ctx.submission, 'register-app', () => this.oauth.registerClient(ctx.account.id, input));
      if (first.repeated) return res.redirect(303, '/developer?done=app-resent');
      const { client, clientSecret } = first.value;
      const apps = await this.oauth.listClients(ctx.account.id);
      this.web.send(res, 201, developerPage(ctx, apps, { shown: { app: client, secret: clientSecret, what: 'registered' } }));
    } catch (error) {
      if (!(error instanceof DomainError) || error.kind !== 'invalid') throw error;
      this.web.send(res, 400, developerPage(ctx, await this.oauth.listClients(ctx.account.id), { error: error.message, errorField: errorField(error), form }));
    }
  }

  /** The new secret is in this answer only; the same form sent again does not rotate the secret just shown (303 to the list). */
  @Post('apps/:id/rotate-secret')
  async rotate(@Req() req: Request, @Res() res: Response, @Param('id', ParseIdPipe) id: number) {
    const ctx = await this.web.accountForm(req, res, '/developer');
    if (!ctx) return;
    const first = await this.forms.once(ctx.submission, `rotate-secret/${id}`, () => this.oauth.rotateClientSecret(ctx.account.id, id));
    if (first.repeated) return res.redirect(303, '/developer?done=secret-resent');
    const secret = first.value;
    const apps = await this.oauth.listClients(ctx.account.id);
    const app = apps.find((a) => a.id === id);
    // Deleted (in another tab) between the rotation and this list: the new secret opens nothing.
    if (!app) return res.redirect(303, '/developer');
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
