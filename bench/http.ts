import http from 'node:http';

export interface HttpResult {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

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

  request(method: string, path: string, body?: unknown): Promise<HttpResult> {
    return this.send(method, path, body === undefined ? undefined : Buffer.from(JSON.stringify(body)), 'application/json');
  }

  /** A request with a body already encoded as `contentType` (a multipart upload). */
  send(method: string, path: string, payload: Buffer | undefined, contentType: string): Promise<HttpResult> {
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
