import net from 'node:net';

/** Where a database URL's PostgreSQL server listens. */
export function serverOf(serverUrl: string): { host: string; port: number } {
  const target = new URL(serverUrl);
  return { host: target.hostname, port: Number(target.port || 5432) };
}

/** A database URL rewritten to go through a relay listening on `port` of the loopback. */
export function relayedUrl(databaseUrl: string, port: number): string {
  const url = new URL(databaseUrl);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return url.toString();
}

/**
 * A TCP relay the test controls, put between the server and PostgreSQL so an
 * outage can be made without touching the machine's shared database: `cut()`
 * drops every relayed connection and refuses new ones (what a stopped
 * PostgreSQL looks like to its clients), `restore()` listens again on the same port.
 */
export class TcpRelay {
  private server?: net.Server;
  private readonly sockets = new Set<net.Socket>();
  port = 0;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  /** A relay, listening, to the PostgreSQL server a database URL names. */
  static async toDatabase(serverUrl: string): Promise<TcpRelay> {
    const { host, port } = serverOf(serverUrl);
    const relay = new TcpRelay(host, port);
    await relay.listen();
    return relay;
  }

  /** A database URL of the relayed server, rewritten to go through the relay. */
  through(databaseUrl: string): string {
    return relayedUrl(databaseUrl, this.port);
  }

  async listen(): Promise<number> {
    this.server = net.createServer((client) => this.relay(client));
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
    this.port = (this.server.address() as net.AddressInfo).port;
    return this.port;
  }

  async cut(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    await closed;
  }

  async restore(): Promise<void> {
    await this.listen();
  }

  async close(): Promise<void> {
    await this.cut();
  }

  private relay(client: net.Socket): void {
    const upstream = net.connect(this.targetPort, this.targetHost);
    this.sockets.add(client).add(upstream);
    client.pipe(upstream);
    upstream.pipe(client);
    const end = () => {
      client.destroy();
      upstream.destroy();
      this.sockets.delete(client);
      this.sockets.delete(upstream);
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  }
}
