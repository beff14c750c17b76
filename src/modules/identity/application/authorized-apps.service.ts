import { Injectable } from '@nestjs/common';
import type { Scope } from '../../../shared/domain/actor.js';
import type { AuthorizedApp } from '../contracts/oauth.api.js';
import { OAuthGrantsRepository, type LiveGrantRow } from '../infrastructure/oauth-grants.repository.js';

/** The order scopes are shown in: narrowest first. */
const SCOPE_ORDER: Scope[] = ['read_user', 'read_workspace', 'write_workspace'];

/**
 * What a user sees of the applications acting for them, and how they take
 * that back without the application's help: before, a grant lived until the
 * app revoked it itself or its developer deleted the app (a refresh token
 * keeps it going 30 days past each refresh).
 */
@Injectable()
export class AuthorizedAppsService {
  constructor(private readonly grants: OAuthGrantsRepository) {}

  async list(userId: number): Promise<AuthorizedApp[]> {
    const apps = new Map<number, AuthorizedApp>();
    for (const grant of await this.grants.liveGrantsOf(userId)) {
      const app = apps.get(grant.clientPk);
      apps.set(grant.clientPk, app ? merged(app, grant) : toApp(grant));
    }
    return [...apps.values()];
  }

  revoke(userId: number, clientPk: number): Promise<void> {
    return this.grants.endGrantsOf(userId, clientPk);
  }
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

function toApp(grant: LiveGrantRow): AuthorizedApp {
  return {
    id: grant.clientPk,
    name: grant.clientName,
    scopes: SCOPE_ORDER.filter((s) => grant.scopes.includes(s)),
    authorizedAt: grant.authorizedAt.toISOString(),
    lastIssuedAt: iso(grant.issuedAt),
  };
}

/** One more authorization of an app already listed (grants come oldest first). */
function merged(app: AuthorizedApp, grant: LiveGrantRow): AuthorizedApp {
  const issued = [app.lastIssuedAt, iso(grant.issuedAt)].filter((d): d is string => d !== null).sort();
  return {
    ...app,
    scopes: SCOPE_ORDER.filter((s) => app.scopes.includes(s) || grant.scopes.includes(s)),
    lastIssuedAt: issued.at(-1) ?? null,
  };
}
