import { createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';
import type { Request } from 'express';
import type { Actor } from '../domain/actor.js';
import { UnauthorizedError } from '../domain/domain-error.js';

/** The authenticated caller, set on the request by the authentication guard. */
export const CurrentActor = createParamDecorator((_: unknown, ctx: ExecutionContext): Actor => {
  const actor = (ctx.switchToHttp().getRequest<Request>() as Request & { user?: Actor }).user;
  if (!actor) throw new UnauthorizedError('Authentication required');
  return actor;
});

export const IS_PUBLIC = 'cardwork:public';
/** A route that needs no credentials (health, readiness, OpenAPI). */
export const Public = () => SetMetadata(IS_PUBLIC, true);
