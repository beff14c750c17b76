import { maxHeaderSize, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { titleFor } from './problem.js';

/*
 * What the HTTP server refuses before any route runs (its parser's errors, an
 * Expect it cannot meet), answered as problem+json like every other refusal.
 */

/** Node's limit on a request's head (16 KiB unless --max-http-header-size says otherwise), as the 431 says it. */
export const HEADER_LIMIT = maxHeaderSize % 1024 === 0 ? `${maxHeaderSize / 1024} KiB` : `${maxHeaderSize} bytes`;

const PARSE_ERROR_STATUS: Record<string, number> = {
  HPE_HEADER_OVERFLOW: 431,
  ERR_HTTP_REQUEST_TIMEOUT: 408,
  HPE_HEADERS_TIMEOUT: 408,
};

/**
 * Requests Node's HTTP parser refuses before any route runs (headers over
 * 16 KiB, malformed request lines) get a problem+json answer instead of Node's
 * bare status line or a reset (DESIGN.md §2). The web pages' too: the path
 * is not known here. The parser reads the socket itself, and the error
 * carries only the chunk it was parsing (`rawPacket`), whose first line is
 * the request line only when the whole head came in one read.
 */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (error.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    const status = PARSE_ERROR_STATUS[error.code ?? ''] ?? 400;
    const detail =
      status === 431
        ? `The request line and headers are larger than ${HEADER_LIMIT} in all (a URL counts, as cookies do)`
        : status === 408
          ? `The request did not arrive in time: its head has ${server.headersTimeout} ms (REQUEST_HEADERS_TIMEOUT_MS), all of it ${server.requestTimeout} ms`
          : 'Malformed HTTP request';
    const body = JSON.stringify({ type: `HTTP.${status}`, title: titleFor(status), status, detail, error: detail });
    socket.end(
      `HTTP/1.1 ${status} ${titleFor(status)}\r\nContent-Type: application/problem+json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
  answerUnmetExpectations(server);
}

/**
 * A request whose `Expect` asks for something other than 100-continue (RFC
 * 9110 §10.1.1): Node answers it a bare 417 itself, before any route runs,
 * unless the server listens for it. Answered here as problem+json like the
 * parser's refusals; the connection is closed, since a client may send its
 * body anyway and nothing here reads it.
 */
function answerUnmetExpectations(server: Server): void {
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    const asked = String(req.headers.expect).slice(0, 100).replace(/[^\x20-\x7e]/g, '?');
    const detail = `The Expect header asks for "${asked}"; this server meets only 100-continue`;
    const body = JSON.stringify({ type: 'HTTP.417', title: titleFor(417), status: 417, detail, error: detail });
    res.writeHead(417, { 'Content-Type': 'application/problem+json', 'Content-Length': Buffer.byteLength(body), Connection: 'close' });
    res.end(body);
  });
}
