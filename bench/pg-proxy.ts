import net from 'node:net';

/**
 * A TCP relay in front of PostgreSQL that counts the statements its clients
 * send: simple-protocol queries ('Q') and extended-protocol executions ('E').
 * Only used for the short "statements per request" diagnosis, never while
 * timing (it would add a hop to every query).
 */
export class CountingPgProxy {
  statements = 0;
  private server?: net.Server;
  private readonly sockets = new Set<net.Socket>();

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  async listen(): Promise<number> {
    this.server = net.createServer((client) => this.relay(client));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return (this.server.address() as net.AddressInfo).port;
  }

  reset(): void {
    this.statements = 0;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }

  private relay(client: net.Socket): void {
    const upstream = net.connect(this.targetPort, this.targetHost);
    this.sockets.add(client).add(upstream);
    let buffered = Buffer.alloc(0);
    let startupDone = false;
    client.on('data', (chunk: Buffer) => {
      upstream.write(chunk);
      buffered = Buffer.concat([buffered, chunk]);
      for (;;) {
        if (!startupDone) {
          // Startup-phase messages carry no type byte: int32 length, int32 code.
          if (buffered.length < 8) break;
          const len = buffered.readInt32BE(0);
          if (buffered.length < len) break;
          const code = buffered.readInt32BE(4);
          buffered = buffered.subarray(len);
          // SSLRequest / GSSENCRequest are followed by the real startup message.
          if (code !== 80877103 && code !== 80877104) startupDone = true;
          continue;
        }
        if (buffered.length < 5) break;
        const type = String.fromCharCode(buffered[0]);
        const len = buffered.readInt32BE(1);
        if (buffered.length < len + 1) break;
        if (type === 'Q' || type === 'E') this.statements++;
        buffered = buffered.subarray(len + 1);
      }
    });
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
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
