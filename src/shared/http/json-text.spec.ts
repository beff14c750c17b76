import http, { type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from '@jest/globals';
import express, { type Response } from 'express';
import { sendJsonArray, type JsonArrayParts } from './json-text.js';

/** A server whose one route answers with `parts()`; what `sendJsonArray` did with the response is kept in `sent`. */
async function serve(parts: () => JsonArrayParts): Promise<{ url: string; sent: Promise<Response>; close: () => Promise<void> }> {
  let answered!: (res: Response) => void;
  const sent = new Promise<Response>((resolve) => (answered = resolve));
  const app = express();
  app.get('/', (_req, res) => {
    void sendJsonArray(res, parts()).then(() => answered(res));
  });
  const server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const close = () => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return { url, sent, close };
}

function get(url: string): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => http.get(url, resolve).on('error', reject));
}

/** The whole body, or the error that cut it. */
function read(res: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => (text += chunk));
    res.on('end', () => (res.complete ? resolve(text) : reject(new Error('cut'))));
    res.on('error', reject);
    res.on('aborted', () => reject(new Error('cut')));
  });
}

/** Parts of `count` items each, counting how many were asked for. */
function counted(parts: string[]): { rest: AsyncIterable<string>; asked: () => number; ended: () => boolean } {
  let asked = 0;
  let ended = false;
  async function* rest() {
    try {
      for (const part of parts) {
        asked++;
        yield part;
      }
    } finally {
      ended = true;
    }
  }
  return { rest: rest(), asked: () => asked, ended: () => ended };
}

const BIG = `"${'x'.repeat(8 * 2 ** 20)}"`;

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('sendJsonArray', () => {
  let close: (() => Promise<void>) | undefined;
  afterEach(() => close?.());

  /** An answer of seven parts of 8 MiB, the client's response to it, and the parts after the first as counted. */
  async function bigAnswer() {
    const parts = counted(Array.from({ length: 6 }, () => BIG));
    const s = await serve(() => ({ first: BIG, rest: parts.rest }));
    close = s.close;
    return { parts, res: await get(s.url), sent: s.sent };
  }

  it('sends one part as one text, with its length and ETag', async () => {
    const s = await serve(() => ({ first: '1,{"a":"b"}' }));
    close = s.close;
    const res = await get(s.url);
    expect([res.headers['content-type'], res.headers['content-length'], typeof res.headers.etag]).toEqual(['application/json; charset=utf-8', '13', 'string']);
    expect(JSON.parse(await read(res))).toEqual([1, { a: 'b' }]);
    const empty = await serve(() => ({ first: '' }));
    await s.close();
    close = empty.close;
    expect(await get(empty.url).then(read)).toBe('[]');
  });

  it('writes more parts one by one (chunked), skipping empty ones', async () => {
    const s = await serve(() => ({ first: '', rest: counted(['', '1,2', '', '3', '']).rest }));
    close = s.close;
    const res = await get(s.url);
    expect([res.statusCode, res.headers['transfer-encoding'], res.headers['content-length']]).toEqual([200, 'chunked', undefined]);
    expect(await read(res)).toBe('[1,2,3]');
  });

  // Writing every part at once held the whole answer in memory (2.5 GB for
  // 20 000 cards of 1 004 fields): the next part is read only once the socket
  // has taken the one before.
  it('reads the next part only once the client has taken the one before', async () => {
    const { parts, res } = await bigAnswer();
    res.pause();
    await wait(300);
    // The first part fills the socket's buffers; at most the part after it is read meanwhile.
    expect(parts.asked()).toBeLessThanOrEqual(1);
    res.resume();
    const body = await read(res);
    expect(body.length).toBe(7 * BIG.length + 8);
    expect(parts.asked()).toBe(6);
  });

  it('cuts the connection on an error after the first part, and says so in the request log', async () => {
    async function* failing() {
      yield '2';
      throw new Error('the database went away');
    }
    const s = await serve(() => ({ first: '1', rest: failing() }));
    close = s.close;
    const res = await get(s.url);
    expect(res.statusCode).toBe(200);
    await expect(read(res)).rejects.toThrow('cut');
    const sent = (await s.sent) as Response & { err?: Error };
    expect(sent.err?.message).toBe('the database went away');
  });

  it('reads no more parts once the client has left', async () => {
    const { parts, res, sent } = await bigAnswer();
    res.destroy();
    await sent;
    expect(parts.asked()).toBeLessThanOrEqual(1);
    // A part asked for was the last: the parts were closed.
    if (parts.asked()) expect(parts.ended()).toBe(true);
  });
});
