import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { describe, expect, it } from '@jest/globals';

// Docker cannot run here: the image's health check is run as Docker runs it
// (its shell form, `/bin/sh -c`) against a stand-in server, and the build
// context's exclusions are read.
const root = path.resolve(import.meta.dirname, '../../..');
const read = (file: string) => fs.readFileSync(path.join(root, file), 'utf8');

/** Runs the HEALTHCHECK command with `env` as the container's environment; its exit code. */
function healthcheck(env: Record<string, string>): Promise<number | null> {
  const command = /^HEALTHCHECK CMD (.+)$/m.exec(read('Dockerfile'))?.[1];
  if (!command) throw new Error('the Dockerfile has no HEALTHCHECK CMD');
  const proc = spawn('/bin/sh', ['-c', command], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: 'ignore' });
  return new Promise((resolve) => proc.once('exit', resolve));
}

describe('the Docker image', () => {
  it('checks health on the port PORT names (3000 when unset)', async () => {
    const hits: string[] = [];
    const server = http.createServer((req, res) => {
      hits.push(req.url ?? '');
      res.writeHead(req.url === '/api/1.0/health' ? 200 : 404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    try {
      expect(await healthcheck({ PORT: String(port) })).toBe(0);
      expect(hits).toEqual(['/api/1.0/health']);
      server.close();
      // Nothing listens there any more: unhealthy.
      expect(await healthcheck({ PORT: String(port) })).toBe(1);
    } finally {
      server.close();
    }
  });

  it('checks health on the one address HOST binds, and on loopback for a wildcard', async () => {
    // 127.0.0.2 is loopback on Linux but not 127.0.0.1: a server bound to it alone is not found on 127.0.0.1.
    const server = http.createServer((req, res) => res.writeHead(req.url === '/api/1.0/health' ? 200 : 404).end());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.2', resolve));
    const port = String((server.address() as AddressInfo).port);
    try {
      expect(await healthcheck({ PORT: port, HOST: '127.0.0.2' })).toBe(0);
      expect(await healthcheck({ PORT: port })).toBe(1);
    } finally {
      server.close();
    }
    const wildcard = http.createServer((_req, res) => res.writeHead(200).end());
    await new Promise<void>((resolve) => wildcard.listen(0, '0.0.0.0', resolve));
    try {
      expect(await healthcheck({ PORT: String((wildcard.address() as AddressInfo).port), HOST: '0.0.0.0' })).toBe(0);
    } finally {
      wildcard.close();
    }
  });

  it('keeps the repository, dependencies, builds, data and secrets out of the build context', () => {
    const ignored = read('.dockerignore')
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line && !line.startsWith('#'));
    expect(ignored).toEqual(expect.arrayContaining(['.git', 'node_modules', 'dist', 'data', 'coverage', '.env', '.env.*']));
    // What the Dockerfile copies from the context stays in it.
    for (const copied of ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'src', 'migrations', 'bin'])
      expect(ignored).not.toContain(copied);
  });
});
