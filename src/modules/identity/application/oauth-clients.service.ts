import { longerThan } from '../../../shared/domain/safe-text.js';
import { Injectable } from '@nestjs/common';
import type { FieldProblem } from '../../../shared/domain/domain-error.js';
import type { NewOAuthClient, OAuthClientSummary } from '../contracts/oauth.api.js';
import { InvalidOAuthClientError, OAuthClientNotFoundError } from '../domain/identity.errors.js';
import { redirectUriProblem } from '../domain/redirect-uri.js';
import { DECEPTIVE_NAME_MESSAGE, hasDeceptiveCharacter } from '../domain/visible-name.js';
import { newOpaqueSecret } from '../domain/secrets.js';
import { OAuthClientsRepository, type OAuthClientRow } from '../infrastructure/oauth-clients.repository.js';

const MAX_REDIRECT_URIS = 10;
const CLIENT_ID_PREFIX = 'cwc_';
const CLIENT_SECRET_PREFIX = 'cws_';

export function toClientSummary(c: OAuthClientRow): OAuthClientSummary {
  return {
    id: c.id,
    clientId: c.clientId,
    name: c.name,
    redirectUris: c.redirectUris,
    confidential: c.secretHash !== null,
    createdAt: c.createdAt.toISOString(),
  };
}

/** Applications registered on the developer page. */
@Injectable()
export class OAuthClientsService {
  constructor(private readonly clients: OAuthClientsRepository) {}

  async register(ownerId: number, input: NewOAuthClient): Promise<{ client: OAuthClientSummary; clientSecret: string | null }> {
    const { name, redirectUris } = validate(input);
    const secret = input.confidential ? newOpaqueSecret(CLIENT_SECRET_PREFIX) : null;
    const row = await this.clients.insert({
      clientId: newOpaqueSecret(CLIENT_ID_PREFIX, 16).value,
      ownerId,
      name,
      redirectUris,
      secretHash: secret?.hash ?? null,
    });
    return { client: toClientSummary(row), clientSecret: secret?.value ?? null };
  }

  async list(ownerId: number): Promise<OAuthClientSummary[]> {
    return (await this.clients.listForOwner(ownerId)).map(toClientSummary);
  }

  /** A public application has no secret, and rotating one does not make it confidential. */
  async rotateSecret(ownerId: number, id: number): Promise<string> {
    const secret = newOpaqueSecret(CLIENT_SECRET_PREFIX);
    if (await this.clients.replaceSecret(id, ownerId, secret.hash)) return secret.value;
    const app = await this.clients.findById(id);
    if (app?.ownerId === ownerId && app.secretHash === null) {
      throw new InvalidOAuthClientError('This is a public application: it has no client secret to rotate');
    }
    throw new OAuthClientNotFoundError();
  }

  async delete(ownerId: number, id: number): Promise<void> {
    if (!(await this.clients.delete(id, ownerId))) throw new OAuthClientNotFoundError();
  }
}

function validate(input: NewOAuthClient): { name: string; redirectUris: string[] } {
  const problems: FieldProblem[] = [];
  const name = typeof input.name === 'string' ? input.name.trim() : '';
  if (name.length < 1 || longerThan(name, 100)) problems.push({ field: 'name', message: 'must be 1 to 100 characters' });
  // The consent page shows it to users: it must not pass for another app nor turn the page's words around.
  if (hasDeceptiveCharacter(name)) problems.push({ field: 'name', message: `Name ${DECEPTIVE_NAME_MESSAGE}` });
  const uris = Array.isArray(input.redirectUris) ? [...new Set(input.redirectUris.map((u) => String(u).trim()).filter(Boolean))] : [];
  if (uris.length < 1 || uris.length > MAX_REDIRECT_URIS) {
    problems.push({ field: 'redirect_uris', message: `must hold 1 to ${MAX_REDIRECT_URIS} URIs` });
  }
  for (const uri of uris) {
    const problem = redirectUriProblem(uri);
    if (problem) problems.push({ field: 'redirect_uris', message: `${uri} ${problem}` });
  }
  if (typeof input.confidential !== 'boolean') problems.push({ field: 'confidential', message: 'must be true or false' });
  if (problems.length) throw new InvalidOAuthClientError(problems.map((p) => p.message).join('; '), problems);
  return { name, redirectUris: uris };
}
