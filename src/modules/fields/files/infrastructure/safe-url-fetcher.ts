import { lookup as dnsLookup } from 'node:dns/promises';
import type { IncomingMessage, RequestOptions } from 'node:http';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import type { DomainError } from '../../../../shared/domain/domain-error.js';
import type { MemoryHold } from '../../../../shared/upload-memory.js';
import { invalidValue, isValidFileName } from '../../domain/values/index.js';
import { isForbiddenAddress, isHostAddress } from './forbidden-address.policy.js';

export { isForbiddenAddress } from './forbidden-address.policy.js';

export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Resolves a host name to every address it has; the default is `dns.lookup(host, {all: true})`. */
export type HostResolver = (hostname: string) => Promise<ResolvedAddress[]>;

export interface FetchFileOptions {
  maxBytes: number;
  /** The refusal of a body longer than `maxBytes`; "file URL is too large" unless given. */
  tooLarge?: string;
  /** For the whole download, redirects included. */
  timeoutMs: number;
  /** FILE_URL_ALLOW_PRIVATE: lets tests and closed networks reach private addresses. */
  allowPrivate: boolean;
  maxRedirects?: number;
  /** Named in the 400s; the request property that carried the URL. */
  field?: string;
  /** Test seam: a fake DNS. */
  resolveHost?: HostResolver;
  /** Test seam: the address policy, `isForbiddenAddress` unless replaced. */
  isForbidden?: (ip: string) => boolean;
  /** Whether an address is one of the host's own; its network interfaces (`os.networkInterfaces`) at each check unless replaced. */
  isOwnAddress?: (ip: string) => boolean;
  /**
   * The request's share of the upload memory budget: the body's declared
   * length is taken before it is read, or else each chunk as it comes; what
   * cannot fit ends the download with a 503 (ServiceBusyError).
   */
  memory?: MemoryHold;
}

export interface FetchedFile {
  bytes: Buffer;
  mimeType: string;
  name: string;
}

const DEFAULT_MAX_REDIRECTS = 3;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const MIME_TYPE = /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/;

const defaultResolver: HostResolver = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/** Ends the download from any step; fetchFileByUrl turns it into the 400 the client sees. */
class FetchAbort {
  constructor(readonly message: string) {}
}

function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

/** `base` resolves a relative redirect Location against the URL that sent it. */
function parseTarget(raw: string, base?: URL): URL {
  let url: URL;
  try {
    url = new URL(raw, base);
  } catch {
    throw new FetchAbort('file URL is not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new FetchAbort('file URL must use http or https');
  if (url.username !== '' || url.password !== '') throw new FetchAbort('file URL must not contain credentials');
  return url;
}

/**
 * The addresses the connection may use. The URL parser has already turned
 * decimal, hex and octal IPv4 forms into dotted quads, so checking `hostname`
 * covers them. For names, every address DNS gives must pass: a name with one
 * public and one private address would otherwise reach the private one by chance.
 */
async function checkedAddresses(url: URL, opts: FetchFileOptions): Promise<ResolvedAddress[]> {
  const forbidden = opts.isForbidden ?? isForbiddenAddress;
  const host = hostOf(url);
  const literal = isIP(host);
  let addresses: ResolvedAddress[];
  if (literal !== 0) {
    addresses = [{ address: host, family: literal }];
  } else {
    try {
      addresses = await (opts.resolveHost ?? defaultResolver)(host);
    } catch {
      throw new FetchAbort('could not fetch file URL: host not found');
    }
    if (addresses.length === 0) throw new FetchAbort('could not fetch file URL: host not found');
  }
  if (opts.allowPrivate) return addresses;
  if (addresses.some((a) => forbidden(a.address))) throw new FetchAbort('file URL points to a private or loopback address');
  const own = opts.isOwnAddress ?? ((ip: string) => isHostAddress(ip, networkInterfaces));
  if (addresses.some((a) => own(a.address))) throw new FetchAbort('file URL points to an address of this server');
  return addresses;
}

/**
 * Answers Node's connection lookup with the addresses already checked, so a
 * second DNS answer (rebinding) can never be used. All of them are offered so
 * Node's happy-eyeballs fallback between IPv6 and IPv4 still works.
 */
function pinnedLookup(pinned: ResolvedAddress[]): NonNullable<RequestOptions['lookup']> {
  return (_hostname, options, callback) => {
    const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : options.family;
    const sameFamily = pinned.filter((a) => !family || a.family === family);
    const usable = sameFamily.length > 0 ? sameFamily : pinned;
    if (options.all) callback(null, usable.map((a) => ({ address: a.address, family: a.family })));
    else callback(null, usable[0].address, usable[0].family);
  };
}

function fileNameFrom(url: URL): string | null {
  const segment = url.pathname.split('/').filter((s) => s !== '').pop();
  if (segment === undefined) return null;
  let name: string;
  try {
    name = decodeURIComponent(segment);
  } catch {
    name = segment;
  }
  return isValidFileName(name) ? name : null;
}

function mimeTypeOf(response: IncomingMessage): string {
  const type = (response.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  return MIME_TYPE.test(type) ? type : 'application/octet-stream';
}

type Hop = { kind: 'redirect'; location: string } | { kind: 'body'; bytes: Buffer; mimeType: string };

function requestOnce(url: URL, pinned: ResolvedAddress[], opts: FetchFileOptions, signal: AbortSignal): Promise<Hop> {
  return new Promise<Hop>((resolve, reject) => {
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const request = send(url, {
      method: 'GET',
      // A fresh socket per hop: a pooled one might be connected to an address this hop did not check.
      agent: false,
      lookup: pinnedLookup(pinned),
      signal,
      headers: { accept: '*/*', 'accept-encoding': 'identity', 'user-agent': 'cardwork-file-fetcher' },
    });
    // A refusal for memory (503, or 429 past the user's share) is what it is, not a 400 about the URL.
    const fail = (error: FetchAbort | DomainError): void => {
      request.destroy();
      reject(error);
    };
    // Socket errors carry internals (addresses, errno); the client only learns what kind of failure it was.
    const networkError = (what: string) => (): void =>
      reject(new FetchAbort(signal.aborted ? 'file URL timed out' : `could not fetch file URL: ${what}`));
    request.on('error', networkError('connection failed'));
    request.on('response', (response) => {
      const status = response.statusCode ?? 0;
      if (REDIRECT_STATUSES.has(status)) {
        response.resume();
        const location = response.headers.location;
        if (!location) return fail(new FetchAbort(`could not fetch file URL: HTTP ${status} without a Location`));
        request.destroy();
        return resolve({ kind: 'redirect', location });
      }
      if (status < 200 || status > 299) return fail(new FetchAbort(`could not fetch file URL: HTTP ${status}`));
      const tooLarge = opts.tooLarge ?? 'file URL is too large';
      const declared = Number(response.headers['content-length']);
      const known = Number.isFinite(declared);
      if (known && declared > opts.maxBytes) return fail(new FetchAbort(tooLarge));
      // A declared length is taken whole: Node never reads past it.
      if (known && opts.memory && !opts.memory.take(declared)) return fail(opts.memory.refusal());
      const chunks: Buffer[] = [];
      let received = 0;
      response.on('data', (chunk: Buffer) => {
        received += chunk.length;
        if (received > opts.maxBytes) return fail(new FetchAbort(tooLarge));
        if (!known && opts.memory && !opts.memory.take(chunk.length)) return fail(opts.memory.refusal());
        chunks.push(chunk);
      });
      response.on('error', networkError('connection closed early'));
      response.on('end', () => {
        // `end` after a premature close still fires on some paths; `complete` tells them apart.
        if (!response.complete) return reject(new FetchAbort('could not fetch file URL: connection closed early'));
        resolve({ kind: 'body', bytes: Buffer.concat(chunks, received), mimeType: mimeTypeOf(response) });
      });
    });
    request.end();
  });
}

async function download(start: URL, opts: FetchFileOptions, signal: AbortSignal): Promise<FetchedFile> {
  const maxRedirects = opts.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
  let url = start;
  for (let redirects = 0; ; redirects++) {
    // Every hop is checked again: a public host may redirect to 127.0.0.1 or the metadata service.
    const pinned = await checkedAddresses(url, opts);
    if (signal.aborted) throw new FetchAbort('file URL timed out');
    const hop = await requestOnce(url, pinned, opts, signal);
    if (hop.kind === 'body') {
      const name = fileNameFrom(start) ?? fileNameFrom(url) ?? 'download';
      return { bytes: hop.bytes, mimeType: hop.mimeType, name };
    }
    if (redirects >= maxRedirects) throw new FetchAbort('could not fetch file URL: too many redirects');
    url = parseTarget(hop.location, url);
  }
}

/**
 * Downloads the file a client named by URL without letting the client use the
 * server to reach internal addresses (SSRF). Refusals and failures are 400s
 * naming `opts.field`.
 */
export async function fetchFileByUrl(url: string, opts: FetchFileOptions): Promise<FetchedFile> {
  const field = opts.field ?? 'value';
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, opts.timeoutMs);
  try {
    // The race covers the DNS step, which the abort signal cannot interrupt.
    const timeout = new Promise<never>((_, reject) => {
      controller.signal.addEventListener('abort', () => reject(new FetchAbort('file URL timed out')), { once: true });
    });
    return await Promise.race([download(parseTarget(url), opts, controller.signal), timeout]);
  } catch (error) {
    if (timedOut) throw invalidValue(field, 'file URL timed out');
    if (error instanceof FetchAbort) throw invalidValue(field, error.message);
    throw error;
  } finally {
    clearTimeout(timer);
  }
}
