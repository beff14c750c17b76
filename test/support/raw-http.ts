import net from 'node:net';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Parses one HTTP/1.1 answer (Content-Length framed) from raw bytes; undefined while incomplete. */
export function parseResponse(raw: Buffer): { response: RawResponse; rest: Buffer } | undefined {
  const end = raw.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const { status, headers } = parseHead(raw.subarray(0, end));
  const length = Number(headers['content-length'] ?? 0);
  if (raw.length < end + 4 + length) return undefined;
  return {
    response: { status, headers, body: raw.subarray(end + 4, end + 4 + length).toString('utf8') },
    rest: raw.subarray(end + 4 + length),
  };
}

/** The status line and headers of an answer (its head, without the blank line). */
function parseHead(head: Buffer): { status: number; headers: Record<string, string> } {
  const [statusLine, ...lines] = head.toString('latin1').split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: Number(statusLine.split(' ')[1]), headers };
}

/**
 * Opens a socket, writes `head` (and then `body` chunks, stopping at the first
 * answer), and resolves with the first answer and how many body bytes had been
 * written when it came. Used where a client library would hide what the
 * server did (an early 413, a 431 on huge headers).
 */
export function rawExchange(
  port: number,
  head: string,
  body?: { chunk: Buffer; times: number },
): Promise<{ response?: RawResponse; bodyBytesWritten: number; closedWithoutAnswer: boolean }> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let received = Buffer.alloc(0);
    let written = 0;
    let answered: RawResponse | undefined;
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      socket.destroy();
      resolve({ response: answered, bodyBytesWritten: written, closedWithoutAnswer: !answered });
    };
    socket.on('data', (chunk) => {
      received = Buffer.concat([received, chunk]);
      const parsed = parseResponse(received);
      if (parsed) {
        answered = parsed.response;
        finish();
      }
    });
    socket.on('error', finish);
    socket.on('close', finish);
    socket.on('connect', async () => {
      socket.write(head);
      if (!body) return;
      for (let i = 0; i < body.times && !answered && !done; i++) {
        if (!socket.write(body.chunk)) await new Promise((r) => socket.once('drain', r).once('close', r));
        written += body.chunk.length;
        await new Promise((r) => setImmediate(r));
      }
    });
  });
}

/** The body of a chunked answer (Transfer-Encoding: chunked), its chunks joined. */
function dechunk(raw: Buffer): Buffer {
  const parts: Buffer[] = [];
  for (let at = 0; ; ) {
    const line = raw.indexOf('\r\n', at);
    const size = parseInt(raw.subarray(at, line).toString('latin1'), 16);
    if (!size) return Buffer.concat(parts);
    parts.push(raw.subarray(line + 2, line + 2 + size));
    at = line + 2 + size + 2;
  }
}

/**
 * GETs `path` and stops reading as soon as the answer's first bytes have
 * come (the socket paused: the server's writes fill the connection's buffers and
 * wait), runs `whilePaused`, then reads the rest, up to the server's close.
 * What a slow client does to an answer written in parts, each read once the
 * one before is taken.
 */
export function getPausedAfterHead(
  port: number,
  path: string,
  headers: Record<string, string>,
  whilePaused: () => Promise<unknown>,
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('');
    const chunks: Buffer[] = [];
    socket.on('connect', () => socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${lines}Connection: close\r\n\r\n`));
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      // Paused once, at the first bytes: the server sends its head with the first part.
      if (chunks.length > 1) return;
      socket.pause();
      whilePaused().then(
        () => socket.resume(),
        (error) => (socket.destroy(), reject(error)),
      );
    });
    socket.on('error', reject);
    socket.on('end', () => {
      const raw = Buffer.concat(chunks);
      const end = raw.indexOf('\r\n\r\n');
      const answer = parseHead(raw.subarray(0, end));
      const body = raw.subarray(end + 4);
      resolve({ ...answer, body: (answer.headers['transfer-encoding'] === 'chunked' ? dechunk(body) : body).toString('utf8') });
    });
  });
}
