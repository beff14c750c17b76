import { ApiCreatedResponse } from '@nestjs/swagger';
import type { Response } from 'express';
import { PAGE_LINK_SETTING, type PageLinkSetting } from './pagination.js';

/**
 * Sets `Location` (RFC 9110 §10.2.2) on a creation's 201 and hands the created
 * resource back as the body. The URL is absolute under BASE_URL, as the
 * pagination `Link` is, so it holds behind a proxy whatever the request's
 * `Host`. `readAt` is the path of the resource's own read up to its id
 * (`/cards/`): only a resource the API can read back gets a `Location`.
 * One property read and a concatenation: card creation is the hot path.
 */
export function created<T extends { id: number }>(res: Response, readAt: `/${string}/`, resource: T): T {
  const links = res.app.get(PAGE_LINK_SETTING) as PageLinkSetting | undefined;
  if (links) res.setHeader('Location', links.publicBase + readAt + resource.id);
  return resource;
}

/** The 201 of an operation that answers through `created`: the body it documents, and `Location`. */
export const ApiCreatedWithLocation = (options: NonNullable<Parameters<typeof ApiCreatedResponse>[0]>): MethodDecorator & ClassDecorator =>
  ApiCreatedResponse({
    ...options,
    headers: {
      ...options.headers,
      Location: {
        description: 'the absolute URL (under BASE_URL) of the created resource; a GET of it with the same credentials reads it',
        schema: { type: 'string', format: 'uri' },
      },
    },
  });
