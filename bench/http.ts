import http from 'node:http';

export interface HttpResult {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface SendOptions {
  /** The client closes the connection if no whole answer came within this long (a client giving up). */
  giveUpAfterMs?: number;
}

/** What a request the client gave up on "answers": nginx's code for a client that closed its request. */
export const GAVE_UP_STATUS = 499;
const GAVE_UP: HttpResult = { status: GAVE_UP_STATUS, headers: {}, body: '' };

/** A small keep-alive client for the API on 127.0.0.1 (node's http only). */
export class ApiClient {
  private readonly agent: http.Agent;

  constructor(
    private readonly port: number,
    private readonly apiKey: string | null,
    maxSockets = 16,
  ) {
    this.agent = new http.Agent({ keepAlive: true, maxSockets, maxFreeSockets: maxSockets });
  }

  request(method: string, path: string, body?: unknown, options: SendOptions = {}): Promise<HttpResult> {
    return this.send(method, path, body === undefined ? undefined : Buffer.from(JSON.stringify(body)), 'application/json', options);
  }

  /** A request with a body already encoded as `contentType` (a multipart upload). */
  send(method: string, path: string, payload: Buffer | undefined, contentType: string, options: SendOptions = {}): Promise<HttpResult> {
    const headers: Record<string, string | number> = { accept: 'application/json' };
    if (this.apiKey) headers['x-api-key'] = this.apiKey;
    if (payload) {
      headers['content-type'] = contentType;
      headers['content-length'] = payload.length;
    }
    return new Promise((resolve, reject) => {
      const req = http.request(
        { host: '127.0.0.1', port: this.port, method, path: `/api/1.0${path}`, headers, agent: this.agent },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      if (options.giveUpAfterMs !== undefined) {
        // Settled as given up first: the errors destroying the request raises come after and change nothing.
        const timer = setTimeout(() => {
          resolve(GAVE_UP);
          req.destroy();
        }, options.giveUpAfterMs);
        req.once('close', () => clearTimeout(timer));
      }
      if (payload) req.write(payload);
      req.end();
    });
  }

  /** A request that must answer `expected`; returns the parsed JSON body. */
  async json<T>(method: string, path: string, body?: unknown, expected = [200, 201]): Promise<T> {
    const res = await this.request(method, path, body);
    if (!expected.includes(res.status)) {
      throw new Error(`${method} ${path} → ${res.status}: ${res.body.slice(0, 500)}`);
    }
    return JSON.parse(res.body) as T;
  }

  close(): void {
    this.agent.destroy();
  }
}
