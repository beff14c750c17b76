import type { AddressInfo } from 'node:net';
import { expect } from '@jest/globals';
import type { TestApp } from '../../support/test-app.js';

/**
 * Plain HTTP the way the original's clients talk to the service: a real socket
 * (Node's fetch), the key alone in Basic (`base64(key)`, no colon), JSON bodies
 * built by hand, every answer read as JSON. Nothing of the project's own test
 * clients, so these suites see exactly what such a client sees.
 */
export interface RawAnswer {
  status: number;
  headers: Headers;
  /** The parsed JSON body; undefined when the answer is not JSON. */
  body: unknown;
}

export type RawBody = Record<string, unknown> | undefined;

/** `Authorization` as the original's clients build it: the key alone, base64, no colon. */
export const colonlessBasic = (key: string) => `Basic ${Buffer.from(key, 'utf8').toString('base64')}`;

/** Starts the app on a loopback port; the origin to send requests to. */
export async function listen(t: TestApp): Promise<string> {
  await t.app.listen(0, '127.0.0.1');
  const { port } = t.app.getHttpServer().address() as AddressInfo;
  return `http://127.0.0.1:${port}`;
}

export async function send(url: string, method: string, headers: Record<string, string>, body?: RawBody): Promise<RawAnswer> {
  const res = await fetch(url, {
    method,
    headers: { Accept: 'application/json', ...(body ? { 'Content-Type': 'application/json' } : {}), ...headers },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  const json = /json/.test(res.headers.get('content-type') ?? '') ? (JSON.parse(text) as unknown) : undefined;
  return { status: res.status, headers: res.headers, body: json };
}

/** A client of one user, sending only the colon-less Basic credential. */
export function rawClient(origin: string, key: string) {
  const api = `${origin}/api/1.0`;
  const client = {
    api,
    call(method: string, path: string, body?: RawBody): Promise<RawAnswer> {
      return send(path.startsWith('http') ? path : `${api}${path}`, method, { Authorization: colonlessBasic(key) }, body);
    },
    /** A call that must answer `status`; its JSON body. */
    async json<T = Record<string, unknown>>(method: string, path: string, body: RawBody, status: number): Promise<T> {
      const res = await client.call(method, path, body);
      expect({ call: `${method} ${path}`, status: res.status, body: res.body }).toEqual({
        call: `${method} ${path}`,
        status,
        body: expect.anything(),
      });
      return res.body as T;
    },
  };
  return client;
}

export type RawClient = ReturnType<typeof rawClient>;

export interface RawProject {
  id: number;
  organization_id: number;
  title: string;
  top_level_card_id: number;
}

/** A team of `owner` with one project, made through the API. */
export async function teamWithProject(c: RawClient, name: string): Promise<{ org: number; project: RawProject }> {
  const org = (await c.json<{ id: number }>('POST', '/organizations', { name }, 201)).id;
  const project = await c.json<RawProject>('POST', `/organizations/${org}/projects`, { title: `${name} project` }, 201);
  return { org, project };
}
