import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { request as httpRequest, type ClientRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from '@jest/globals';
import type { Metrics } from '../../src/observability/metrics.js';
import { UploadMemoryBudget } from '../../src/shared/upload-memory.js';
import { createTestApp } from './test-app.js';

/** An answer as supertest gives it: a JSON body parsed. */
export interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: unknown;
}

/** The 503 of a request refused for lack of upload memory: problem+json, Retry-After, SERVICE.BUSY. */
export function expectBusy(answer: Answer): void {
  expect(answer.status).toBe(503);
  expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(answer.headers['retry-after']).toBe('5');
  expect(answer.body).toMatchObject({ type: 'SERVICE.BUSY', status: 503 });
}

/** The 429 of a request refused because its user's uploads in progress hold their share of the upload memory: problem+json, Retry-After. */
export function expectOverShare(answer: Answer): void {
  expect(answer.status).toBe(429);
  expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(answer.headers['retry-after']).toBe('5');
  expect(answer.body).toMatchObject({ type: 'RATE.CONCURRENT_UPLOADS', status: 429 });
}

/** A multipart/form-data body holding one file in `part`. */
export function multipartBody(part: string, fileName: string, bytes: Buffer): { type: string; body: Buffer } {
  const boundary = `held${Math.random().toString(36).slice(2)}`;
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="${part}"; filename="${fileName}"\r\nContent-Type: application/octet-stream\r\n\r\n`;
  return {
    type: `multipart/form-data; boundary=${boundary}`,
    body: Buffer.concat([Buffer.from(head), bytes, Buffer.from(`\r\n--${boundary}--\r\n`)]),
  };
}

/**
 * An upload sent in two steps: its headers and `firstBytes` of its body at
 * once, the rest on `finish()`; `answer` resolves whenever the server answers
 * (before the rest, for a refusal), with status 0 if the socket died first.
 */
export interface HeldUpload {
  readonly answer: Promise<Answer>;
  readonly answered: boolean;
  finish(): void;
  /** Cuts the connection, as a client that goes away does. */
  abort(): void;
}

export function holdUpload(
  port: number,
  path: string,
  headers: Record<string, string>,
  upload: { type: string; body: Buffer },
  options: { chunked?: boolean; firstBytes?: number } = {},
): HeldUpload {
  const first = options.firstBytes ?? Math.floor(upload.body.length / 2);
  const framing = options.chunked ? { 'Transfer-Encoding': 'chunked' } : { 'Content-Length': String(upload.body.length) };
  const req = httpRequest({ host: '127.0.0.1', port, method: 'POST', path, agent: false, headers: { ...headers, 'Content-Type': upload.type, ...framing } });
  let answered = false;
  const answer = answerOf(req).then((a) => {
    answered = true;
    return a;
  });
  req.write(upload.body.subarray(0, first));
  return {
    answer,
    get answered() {
      return answered;
    },
    finish: () => {
      if (!req.destroyed) req.end(upload.body.subarray(first));
    },
    abort: () => req.destroy(),
  };
}

/**
 * The server's answer to a request being sent (its JSON body parsed), whenever
 * it comes, even before the body is all sent; the request is then destroyed.
 * Status 0 if the socket died first.
 */
export function answerOf(req: ClientRequest): Promise<Answer> {
  return new Promise<Answer>((resolve) => {
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => {
        const json = /json/.test(res.headers['content-type'] ?? '');
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: json ? JSON.parse(body) : body });
        req.destroy();
      });
    });
    req.on('error', () => resolve({ status: 0, headers: {}, body: '' }));
  });
}

/** Waits for `condition`, checking every 10 ms; fails naming `what` after `timeoutMs`. */
export async function until(condition: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Files kept under a DATA_DIR's `files` directory. */
export function storedFileCount(dataDir: string): number {
  try {
    return readdirSync(`${dataDir}/files`, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).length;
  } catch {
    return 0;
  }
}

/**
 * The app on a data directory of its own, listening on a loopback port:
 * held uploads need a real socket. `close` closes it and removes the directory.
 */
export async function listeningApp(prefix: string, env: Record<string, string>, metrics?: Metrics) {
  const dataDir = mkdtempSync(path.join(tmpdir(), prefix));
  const t = await createTestApp({ env: { DATA_DIR: dataDir, ...env }, observe: metrics ? { metrics } : undefined });
  const server = t.app.getHttpServer() as Server;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const close = async () => {
    await t.close();
    rmSync(dataDir, { recursive: true, force: true });
  };
  return { t, port, dataDir, budget: t.app.get(UploadMemoryBudget), close };
}
