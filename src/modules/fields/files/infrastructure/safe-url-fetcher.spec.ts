import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { InvalidInputError } from '../../../../shared/domain/domain-error.js';
import type { FetchFileOptions, ResolvedAddress } from './safe-url-fetcher.js';
import { fetchFileByUrl, isForbiddenAddress } from './safe-url-fetcher.js';

// Two loopback servers and nothing else: `local` plays the internal service an
// attacker wants to reach; `public` (on 127.0.0.2, which the test policy below
// treats as a public address) plays an outside host that redirects inward.
type Route = (req: IncomingMessage, res: ServerResponse) => void;

interface TestServer {
  server: Server;
  port: number;
  hits: string[];
}

async function startServer(host: string, routes: Record<string, Route>): Promise<TestServer> {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(req.url ?? '');
    const route = routes[(req.url ?? '').split('?')[0]];
    if (route) route(req, res);
    else res.writeHead(404).end('not here');
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return { server, port: (server.address() as AddressInfo).port, hits };
}

async function stopServer(s: TestServer): Promise<void> {
  s.server.closeAllConnections();
  await new Promise<void>((resolve) => s.server.close(() => resolve()));
}

const payload = randomBytes(64 * 1024);
let local: TestServer;
let pub: TestServer;
let localUrl: string;
let publicUrl: string;

const PUBLIC_IP = '127.0.0.2';
const fakeDns: Record<string, string[]> = {
  'public.test': [PUBLIC_IP],
  'private.test': ['127.0.0.1'],
  'mixed.test': [PUBLIC_IP, '127.0.0.1'],
  'metadata.test': ['169.254.169.254'],
};
const resolveHost = async (hostname: string): Promise<ResolvedAddress[]> => {
  const addresses = fakeDns[hostname];
  if (!addresses) throw Object.assign(new Error(`ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
  return addresses.map((address) => ({ address, family: 4 }));
};
/** The fake names, plus localhost as the OS resolves it (without leaving the machine). */
const resolveWithLocalhost = (hostname: string): Promise<ResolvedAddress[]> =>
  hostname === 'localhost' ? lookup('localhost', { all: true }) : resolveHost(hostname);
const testPolicy = (ip: string): boolean => ip !== PUBLIC_IP && isForbiddenAddress(ip);

const open: FetchFileOptions = { maxBytes: 1024 * 1024, timeoutMs: 5000, allowPrivate: true, field: 'Docs' };
const guarded: FetchFileOptions = { ...open, allowPrivate: false, resolveHost, isForbidden: testPolicy };

async function refusal(promise: Promise<unknown>): Promise<InvalidInputError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(InvalidInputError);
  const invalid = error as InvalidInputError;
  expect(invalid.errors?.[0]?.field).toBe('Docs');
  expect(invalid.message.startsWith('Docs: ')).toBe(true);
  return invalid;
}

beforeAll(async () => {
  local = await startServer('127.0.0.1', {
    '/files/report%20v2.pdf': (_req, res) => res.writeHead(200, { 'content-type': 'Application/PDF; charset=binary' }).end(payload),
    '/': (_req, res) => res.writeHead(200).end('root'),
    '/bad-type': (_req, res) => res.writeHead(200, { 'content-type': 'nonsense' }).end('x'),
    '/redirect': (_req, res) => res.writeHead(302, { location: '/files/report%20v2.pdf' }).end(),
    '/chain/3': (_req, res) => res.writeHead(301, { location: '/chain/2' }).end(),
    '/chain/2': (_req, res) => res.writeHead(307, { location: '/chain/1' }).end(),
    '/chain/1': (_req, res) => res.writeHead(308, { location: '/' }).end(),
    '/chain/4': (_req, res) => res.writeHead(303, { location: '/chain/3' }).end(),
    '/no-location': (_req, res) => res.writeHead(302).end(),
    '/to-ftp': (_req, res) => res.writeHead(302, { location: 'ftp://127.0.0.1/x' }).end(),
    '/to-garbage': (_req, res) => res.writeHead(302, { location: 'http://[oops/' }).end(),
    '/big-declared': (_req, res) => res.writeHead(200, { 'content-length': String(2048) }).end(Buffer.alloc(2048)),
    '/big-chunked': (_req, res) => {
      res.writeHead(200);
      for (let i = 0; i < 8; i++) res.write(Buffer.alloc(512));
      res.end();
    },
    '/hang': () => undefined,
    '/stall': (_req, res) => {
      res.writeHead(200, { 'content-length': '1000' });
      res.write('partial');
    },
    '/cut': (req, res) => {
      res.writeHead(200, { 'content-length': '1000' });
      res.write('partial', () => req.socket.destroy());
    },
    '/error': (_req, res) => res.writeHead(500).end(),
  });
  pub = await startServer(PUBLIC_IP, {
    '/ok.txt': (_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('public file'),
    '/to-public': (_req, res) => res.writeHead(302, { location: `http://public.test:${pub.port}/ok.txt` }).end(),
    '/to-loopback': (_req, res) => res.writeHead(302, { location: `http://127.0.0.1:${local.port}/` }).end(),
    '/to-localhost': (_req, res) => res.writeHead(302, { location: `http://localhost:${local.port}/` }).end(),
    '/to-private-name': (_req, res) => res.writeHead(302, { location: `http://private.test:${local.port}/` }).end(),
    '/to-metadata': (_req, res) => res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end(),
    '/to-mapped': (_req, res) => res.writeHead(302, { location: `http://[::ffff:7f00:1]:${local.port}/` }).end(),
  });
  localUrl = `http://127.0.0.1:${local.port}`;
  publicUrl = `http://public.test:${pub.port}`;
});

afterAll(async () => {
  await stopServer(local);
  await stopServer(pub);
});

beforeEach(() => {
  local.hits.length = 0;
  pub.hits.length = 0;
});

describe('fetchFileByUrl with private addresses allowed', () => {
  it('downloads byte for byte, with the name and MIME type', async () => {
    const file = await fetchFileByUrl(`${localUrl}/files/report%20v2.pdf?download=1`, open);
    expect(file.bytes.equals(payload)).toBe(true);
    expect(file.mimeType).toBe('application/pdf');
    expect(file.name).toBe('report v2.pdf');
  });

  it('falls back to "download" and application/octet-stream', async () => {
    expect(await fetchFileByUrl(`${localUrl}/`, open)).toEqual({
      bytes: Buffer.from('root'),
      mimeType: 'application/octet-stream',
      name: 'download',
    });
    expect((await fetchFileByUrl(`${localUrl}/bad-type`, open)).mimeType).toBe('application/octet-stream');
  });

  it('follows redirects, naming the file after the URL the client gave', async () => {
    const file = await fetchFileByUrl(`${localUrl}/redirect`, open);
    expect(file.bytes.equals(payload)).toBe(true);
    expect(file.name).toBe('redirect');
    expect(local.hits).toEqual(['/redirect', '/files/report%20v2.pdf']);
    expect((await fetchFileByUrl(`${localUrl}/chain/3`, open)).bytes.toString()).toBe('root');
  });

  it('stops after three redirects, or a custom limit', async () => {
    expect((await refusal(fetchFileByUrl(`${localUrl}/chain/4`, open))).message).toMatch(/too many redirects/);
    expect(local.hits).toHaveLength(4);
    expect((await refusal(fetchFileByUrl(`${localUrl}/chain/3`, { ...open, maxRedirects: 2 }))).message).toMatch(/too many redirects/);
    await expect(fetchFileByUrl(`${localUrl}/redirect`, { ...open, maxRedirects: 1 })).resolves.toBeDefined();
  });

  it('refuses bad redirects', async () => {
    expect((await refusal(fetchFileByUrl(`${localUrl}/no-location`, open))).message).toMatch(/HTTP 302 without a Location/);
    expect((await refusal(fetchFileByUrl(`${localUrl}/to-ftp`, open))).message).toMatch(/http or https/);
    expect((await refusal(fetchFileByUrl(`${localUrl}/to-garbage`, open))).message).toMatch(/not a valid URL/);
  });

  it('enforces the size cap from Content-Length and while streaming', async () => {
    const small = { ...open, maxBytes: 1024 };
    expect((await refusal(fetchFileByUrl(`${localUrl}/big-declared`, small))).message).toBe('Docs: file URL is too large');
    expect((await refusal(fetchFileByUrl(`${localUrl}/big-chunked`, small))).message).toBe('Docs: file URL is too large');
    await expect(fetchFileByUrl(`${localUrl}/big-chunked`, { ...open, maxBytes: 4096 })).resolves.toHaveProperty('bytes.length', 4096);
  });

  it('times out on a server that never answers or stalls mid-body', async () => {
    const quick = { ...open, timeoutMs: 300 };
    const started = Date.now();
    expect((await refusal(fetchFileByUrl(`${localUrl}/hang`, quick))).message).toBe('Docs: file URL timed out');
    expect((await refusal(fetchFileByUrl(`${localUrl}/stall`, quick))).message).toBe('Docs: file URL timed out');
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('times out on a DNS lookup that never answers', async () => {
    const never = (): Promise<ResolvedAddress[]> => new Promise(() => undefined);
    const error = await refusal(fetchFileByUrl('http://slow.test/', { ...open, timeoutMs: 200, resolveHost: never }));
    expect(error.message).toBe('Docs: file URL timed out');
  });

  it('reports HTTP errors, cut connections and unknown hosts', async () => {
    expect((await refusal(fetchFileByUrl(`${localUrl}/missing`, open))).message).toBe('Docs: could not fetch file URL: HTTP 404');
    expect((await refusal(fetchFileByUrl(`${localUrl}/error`, open))).message).toBe('Docs: could not fetch file URL: HTTP 500');
    expect((await refusal(fetchFileByUrl(`${localUrl}/cut`, open))).message).toMatch(/connection closed early/);
    expect((await refusal(fetchFileByUrl('http://nowhere.test/', { ...open, resolveHost }))).message).toMatch(/host not found/);
  });

  it('refuses non-http schemes, credentials and garbage', async () => {
    for (const url of ['ftp://127.0.0.1/', 'file:///etc/passwd', `http://u:p@127.0.0.1:${local.port}/`, 'not a url']) {
      await refusal(fetchFileByUrl(url, open));
    }
    expect(local.hits).toEqual([]);
  });

  it('offers every checked address, so a dead first address falls back to the next', async () => {
    // Nothing listens on 127.0.0.3: the connection must move on to 127.0.0.1.
    const twoAddresses = async (): Promise<ResolvedAddress[]> => [
      { address: '127.0.0.3', family: 4 },
      { address: '127.0.0.1', family: 4 },
    ];
    const file = await fetchFileByUrl(`http://two.test:${local.port}/`, { ...open, resolveHost: twoAddresses });
    expect(file.bytes.toString()).toBe('root');
  });

  it('names the field "value" unless told otherwise', async () => {
    const error = await fetchFileByUrl(`${localUrl}/missing`, { ...open, field: undefined }).catch((e: unknown) => e);
    expect((error as InvalidInputError).errors?.[0]?.field).toBe('value');
  });
});

describe('fetchFileByUrl refusing private addresses', () => {
  // `{port}` is the local server's port, known only once it listens.
  it.each([
    'http://127.0.0.1:{port}/',
    'http://localhost:{port}/',
    'http://[::1]:{port}/',
    'http://[::ffff:127.0.0.1]:{port}/',
    'http://[::ffff:7f00:1]:{port}/',
    'http://2130706433:{port}/',
    'http://0x7f.1:{port}/',
    'http://0177.0.0.1:{port}/',
    'http://127.1:{port}/',
    'http://0:{port}/',
    'http://169.254.169.254/latest/meta-data/',
    'http://10.0.0.1/',
    'http://192.168.1.1/',
    'http://100.64.0.1/',
    'http://[fd00::1]/',
    'http://[fe80::1]/',
    'http://private.test:{port}/',
    'http://mixed.test:{port}/',
    'http://metadata.test/',
  ])('refuses %s without connecting', async (template) => {
    const url = template.replace('{port}', String(local.port));
    const error = await refusal(fetchFileByUrl(url, { ...guarded, resolveHost: resolveWithLocalhost }));
    expect(error.message).toBe('Docs: file URL points to a private or loopback address');
    expect(local.hits).toEqual([]);
    expect(pub.hits).toEqual([]);
  });

  it('refuses localhost through the real resolver too', async () => {
    const error = await refusal(fetchFileByUrl(`http://localhost:${local.port}/`, { ...guarded, resolveHost: undefined }));
    expect(error.message).toMatch(/private or loopback/);
    expect(local.hits).toEqual([]);
  });

  it('fetches from a public address and follows a public redirect', async () => {
    const file = await fetchFileByUrl(`${publicUrl}/to-public`, guarded);
    expect(file.bytes.toString()).toBe('public file');
    expect(file.mimeType).toBe('text/plain');
    expect(pub.hits).toEqual(['/to-public', '/ok.txt']);
  });

  it.each([['/to-loopback'], ['/to-localhost'], ['/to-private-name'], ['/to-metadata'], ['/to-mapped']])(
    'refuses a redirect from a public host into the private network: %s',
    async (path) => {
      const error = await refusal(fetchFileByUrl(`${publicUrl}${path}`, { ...guarded, resolveHost: resolveWithLocalhost }));
      expect(error.message).toBe('Docs: file URL points to a private or loopback address');
      expect(pub.hits).toEqual([path]);
      expect(local.hits).toEqual([]);
    },
  );

  it('connects to the address it checked, never asking DNS twice (no rebinding)', async () => {
    const answers = [[PUBLIC_IP], ['127.0.0.1']];
    const calls: string[] = [];
    const rebinding = async (hostname: string): Promise<ResolvedAddress[]> => {
      calls.push(hostname);
      return (answers.shift() ?? ['127.0.0.1']).map((address) => ({ address, family: 4 }));
    };
    const file = await fetchFileByUrl(`http://rebind.test:${pub.port}/ok.txt`, { ...guarded, resolveHost: rebinding });
    expect(file.bytes.toString()).toBe('public file');
    expect(calls).toEqual(['rebind.test']);
    expect(pub.hits).toEqual(['/ok.txt']);
    expect(local.hits).toEqual([]);
  });
});
