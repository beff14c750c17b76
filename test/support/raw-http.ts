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
  const [statusLine, ...lines] = raw.subarray(0, end).toString('latin1').split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const length = Number(headers['content-length'] ?? 0);
  if (raw.length < end + 4 + length) return undefined;
  return {
    response: { status: Number(statusLine.split(' ')[1]), headers, body: raw.subarray(end + 4, end + 4 + length).toString('utf8') },
    rest: raw.subarray(end + 4 + length),
  };
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
