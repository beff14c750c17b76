import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { FileUrlPolicy } from '../../../src/modules/fields/files/application/file-inputs.service.js';
import { isForbiddenAddress } from '../../../src/modules/fields/files/infrastructure/forbidden-address.policy.js';
import { type TestApp, type TestUser } from '../../support/test-app.js';
import { fieldsWorld, type FieldsClient, type World } from './fields-fixtures.js';

/** Stands in for an outside server: the only address the guard is told to treat as public. */
const OUTSIDE = '127.0.0.2';

/**
 * "File by URL" with FILE_URL_ALLOW_PRIVATE=false (the default): every URL
 * that reaches the host itself, the private network or link-local addresses
 * is refused before any connection is made, also when a redirect leads there.
 */
describe('file by URL: the SSRF guard', () => {
  let t: TestApp, c: FieldsClient, ann: TestUser;
  let card: number;
  let inside: Server;
  let outside: Server;
  let insidePort: number;
  let outsidePort: number;
  const hits = { inside: 0, outside: 0 };

  beforeAll(async () => {
    // Dual-stack on every interface: any loopback, mapped or local form would reach it if allowed through.
    inside = createServer((_req, res) => {
      hits.inside++;
      res.end('internal secret');
    });
    await new Promise<void>((resolve) => inside.listen(0, '::', resolve));
    insidePort = (inside.address() as AddressInfo).port;
    outside = createServer((req, res) => {
      hits.outside++;
      const target = decodeURIComponent((req.url ?? '/').slice(1));
      res.writeHead(302, { Location: target });
      res.end();
    });
    await new Promise<void>((resolve) => outside.listen(0, OUTSIDE, resolve));
    outsidePort = (outside.address() as AddressInfo).port;

    let w: World;
    ({ t, c, ann, w } = await fieldsWorld({
      override: (app) => {
        const policy = app.get(FileUrlPolicy);
        policy.isForbidden = (ip: string) => ip !== OUTSIDE && isForbiddenAddress(ip);
      },
    }));
    expect(t.config.fileUrlAllowPrivate).toBe(false);
    await c.field(ann, w.project, 'Attachments', 'files');
    card = (await c.card(ann, w.root, 'guarded')).id;
  });
  afterAll(async () => {
    await t.close();
    await new Promise((resolve) => inside.close(resolve));
    await new Promise((resolve) => outside.close(resolve));
  });

  const redirectVia = (target: string) => `http://${OUTSIDE}:${outsidePort}/${encodeURIComponent(target)}`;
  const cases: Array<[label: string, url: () => string]> = [
    ['loopback IPv4', () => `http://127.0.0.1:${insidePort}/secret`],
    ['loopback elsewhere in 127/8', () => `http://127.3.4.5:${insidePort}/secret`],
    ['localhost by name', () => `http://localhost:${insidePort}/secret`],
    ['loopback IPv6', () => `http://[::1]:${insidePort}/secret`],
    ['IPv6-mapped loopback', () => `http://[::ffff:127.0.0.1]:${insidePort}/secret`],
    ['IPv6-mapped loopback in hex', () => `http://[::ffff:7f00:1]:${insidePort}/secret`],
    ['decimal loopback', () => `http://2130706433:${insidePort}/secret`],
    ['hex and short loopback', () => `http://0x7f.1:${insidePort}/secret`],
    ['the unspecified address', () => `http://0.0.0.0:${insidePort}/secret`],
    ['private 10/8', () => 'http://10.0.0.1/secret'],
    ['private 172.16/12', () => 'http://172.16.5.4/secret'],
    ['private 192.168/16', () => `http://192.168.1.20:${insidePort}/secret`],
    ['unique local IPv6', () => 'http://[fd00::1]/secret'],
    ['link-local (cloud metadata)', () => 'http://169.254.169.254/latest/meta-data/'],
    ['link-local IPv6', () => 'http://[fe80::1]/secret'],
    ['IPv6-mapped link-local', () => 'http://[::ffff:169.254.169.254]/latest/meta-data/'],
    ['a redirect to loopback', () => redirectVia(`http://127.0.0.1:${insidePort}/secret`)],
    ['a redirect to IPv6-mapped loopback', () => redirectVia(`http://[::ffff:127.0.0.1]:${insidePort}/secret`)],
    ['a redirect to link-local', () => redirectVia('http://169.254.169.254/latest/meta-data/')],
    ['a relative redirect to localhost', () => redirectVia(`//localhost:${insidePort}/secret`)],
  ];

  it.each(cases)('refuses %s without connecting to it', async (label, url) => {
    const before = await c.get(ann, card);
    const insideBefore = hits.inside;
    const outsideBefore = hits.outside;
    const started = Date.now();
    for (const res of [
      await c.append(ann, card, 'Attachments', url()),
      await c.set(ann, card, 'Attachments', [url()]),
      await c.setMany(ann, card, { attributes: { Attachments: url() } }),
    ]) {
      expect({ label, status: res.status }).toEqual({ label, status: 400 });
      expect(res.body.detail).toMatch(/Attachments: file URL points to a private or loopback address/);
      expect(res.body.detail).not.toContain('secret');
    }
    // Refused on the address, not after a connection attempt timed out.
    expect(Date.now() - started).toBeLessThan(5000);
    expect(hits.inside).toBe(insideBefore);
    // A redirect case really went through the stand-in outside server first.
    if (label.startsWith('a redirect') || label.startsWith('a relative redirect')) expect(hits.outside).toBe(outsideBefore + 3);
    expect(await c.get(ann, card)).toEqual(before);
  });

  it('the inside server was never reached, while the stand-in outside server was (it only redirects)', () => {
    expect(hits.inside).toBe(0);
    expect(hits.outside).toBeGreaterThan(0);
  });

  it("refuses the server's own interface addresses, read from its interfaces at each request", async () => {
    const policy = t.app.get(FileUrlPolicy);
    const url = `http://${OUTSIDE}:${outsidePort}/${encodeURIComponent('http://10.0.0.1/')}`;
    const tried = async () => {
      const before = hits.outside;
      const res = await c.append(ann, card, 'Attachments', url);
      expect(res.status).toBe(400);
      return { reached: hits.outside - before, detail: res.body.detail as string };
    };
    // Without an interface there the stand-in outside server is reached (it redirects to a private address: refused then).
    expect(await tried()).toEqual({ reached: 1, detail: expect.stringMatching(/private or loopback address/) });
    // The same address as an interface of the host: refused before any connection.
    policy.interfaces = () => ({
      ...networkInterfaces(),
      eth9: [{ address: OUTSIDE, family: 'IPv4', netmask: '255.255.255.0', mac: '02:00:00:00:00:09', internal: false, cidr: `${OUTSIDE}/24` }],
    });
    try {
      expect(await tried()).toEqual({ reached: 0, detail: expect.stringMatching(/Attachments: file URL points to an address of this server/) });
    } finally {
      policy.interfaces = networkInterfaces;
    }
    expect(await tried()).toEqual({ reached: 1, detail: expect.stringMatching(/private or loopback address/) });
  });

  it('refuses other schemes and credentials in the URL', async () => {
    for (const url of ['file:///etc/passwd', 'ftp://example.com/x', 'gopher://127.0.0.1:70/', `http://user:pw@${OUTSIDE}:${outsidePort}/x`]) {
      const res = await c.append(ann, card, 'Attachments', url);
      expect(res.status).toBe(400);
    }
    expect(hits.inside).toBe(0);
  });
});
