import net from 'node:net';
import { relayedUrl, serverOf } from './tcp-relay.js';

/**
 * What the relay does to the traffic between the server and PostgreSQL:
 * - `pass`: relays it;
 * - `cut`: drops every connection and refuses new ones (a stopped server);
 * - `stall`: keeps every connection open and relays nothing either way (a hung
 *   pooler, PostgreSQL frozen on I/O); connections stalled are closed when
 *   the mode changes, since what they sent meanwhile is lost;
 * - `commitcut`: relays a simple-protocol COMMIT, drops its answer, and
 *   closes the connection 300 ms later (the COMMIT happened, the client
 *   never learns it);
 * - `commitdrop`: the same, but the COMMIT never reaches PostgreSQL (which
 *   rolls the transaction back when the connection closes);
 * - `forget`: the connections open now lose their PostgreSQL side unseen (a
 *   NAT or proxy that dropped them idle): each is reset when its client next
 *   writes; new connections are relayed.
 */
export type RelayMode = 'pass' | 'cut' | 'stall' | 'commitcut' | 'commitdrop' | 'forget';

const CUT_CLOSE_MS = 300;
const COMMIT = /^\s*COMMIT\b/i;

interface Relayed {
  client: net.Socket;
  upstream: net.Socket;
  /** Bytes were dropped: the connection can only be closed now. */
  broken: boolean;
  /** Its PostgreSQL side is gone, and its client not told (`forget`). */
  forgotten: boolean;
}

/**
 * A TCP relay in front of PostgreSQL whose faults a test switches
 * (`RelayMode`), read at the level of the protocol's messages (the startup
 * messages, then type byte and length).
 */
export class PgFaultRelay {
  private server?: net.Server;
  private readonly relayed = new Set<Relayed>();
  private mode: RelayMode = 'pass';
  port = 0;
  /** COMMITs cut or dropped so far. */
  commitsCut = 0;

  private constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  /** A relay, listening, to the PostgreSQL server a database URL names. */
  static async toDatabase(serverUrl: string): Promise<PgFaultRelay> {
    const { host, port } = serverOf(serverUrl);
    const relay = new PgFaultRelay(host, port);
    await relay.listen();
    return relay;
  }

  /** A database URL rewritten to go through the relay. */
  through(databaseUrl: string): string {
    return relayedUrl(databaseUrl, this.port);
  }

  async set(mode: RelayMode): Promise<void> {
    const was = this.mode;
    this.mode = mode;
    if (mode === 'cut') {
      for (const r of this.relayed) this.end(r);
      await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
      this.server = undefined;
      return;
    }
    if (was === 'cut') await this.listen();
    if (mode === 'forget') for (const r of this.relayed) this.forget(r);
    if (was === 'stall') for (const r of [...this.relayed].filter((x) => x.broken)) this.end(r);
  }

  async close(): Promise<void> {
    await this.set('cut');
  }

  private async listen(): Promise<void> {
    this.server = net.createServer((client) => this.relay(client));
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
    this.port = (this.server.address() as net.AddressInfo).port;
  }

  private relay(client: net.Socket): void {
    const upstream = net.connect(this.targetPort, this.targetHost);
    const r: Relayed = { client, upstream, broken: false, forgotten: false };
    this.relayed.add(r);
    let pending = Buffer.alloc(0);
    let startup = true;
    client.on('data', (chunk: Buffer) => {
      if (r.forgotten) return this.end(r, true);
      pending = Buffer.concat([pending, chunk]);
      for (;;) {
        const length = startup ? (pending.length >= 4 ? pending.readInt32BE(0) : Infinity) : pending.length >= 5 ? pending.readInt32BE(1) + 1 : Infinity;
        if (pending.length < length) return;
        const message = pending.subarray(0, length);
        pending = pending.subarray(length);
        if (startup) {
          // SSLRequest / GSSENCRequest are followed by the real startup message.
          const code = message.readInt32BE(4);
          startup = code === 80877103 || code === 80877104;
        }
        this.forward(r, message);
      }
    });
    upstream.on('data', (chunk: Buffer) => {
      if (r.broken || this.mode === 'stall') {
        r.broken = true;
        return;
      }
      client.write(chunk);
    });
    const end = () => this.end(r);
    client.on('close', end).on('error', end);
    upstream.on('close', () => r.forgotten || end()).on('error', () => r.forgotten || end());
  }

  /** One whole message from the client, as the mode says. */
  private forward(r: Relayed, message: Buffer): void {
    if (r.broken || this.mode === 'stall') {
      r.broken = true;
      return;
    }
    const isCommit = message[0] === 0x51 /* 'Q' */ && COMMIT.test(message.subarray(5, message.length - 1).toString('utf8'));
    if (isCommit && (this.mode === 'commitcut' || this.mode === 'commitdrop')) {
      if (this.mode === 'commitcut') r.upstream.write(message);
      r.broken = true;
      this.commitsCut++;
      setTimeout(() => this.end(r), CUT_CLOSE_MS);
      return;
    }
    r.upstream.write(message);
  }

  private forget(r: Relayed): void {
    r.forgotten = true;
    r.upstream.destroy();
  }

  /** Closes both sides; `reset`: the client's with an RST, as a peer that knows nothing of it answers. */
  private end(r: Relayed, reset = false): void {
    if (reset) r.client.resetAndDestroy();
    else r.client.destroy();
    r.upstream.destroy();
    this.relayed.delete(r);
  }
}
