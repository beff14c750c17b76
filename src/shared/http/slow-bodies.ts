import type { NextFunction, Request, Response } from 'express';
import { announcesBody, closeAfterAnswer } from './body-limits.js';
import { sendProblem, titleFor } from './problem.js';

/** How a request body must keep arriving (REQUEST_BODY_TIMEOUT_MS, REQUEST_BODY_MIN_BYTES_PER_SECOND). */
export interface BodyPace {
  /** Time a body has before it must show any pace at all, in ms. */
  timeoutMs: number;
  /** Each byte received buys 1/minBytesPerSecond of a second more. */
  minBytesPerSecond: number;
}

/** The pace a body is held to, in words: the 408's detail and OpenAPI's description of it say the same. */
export function bodyPaceRule(pace: BodyPace): string {
  return (
    `a body has ${pace.timeoutMs} ms (REQUEST_BODY_TIMEOUT_MS), ` +
    `and one more second for every ${pace.minBytesPerSecond} bytes received (REQUEST_BODY_MIN_BYTES_PER_SECOND)`
  );
}

/** How often the bodies being read are looked at: a single timer for all of them. */
const SWEEP_MS = 250;

interface Watched {
  req: Request;
  res: Response;
  startedAt: number;
  startBytes: number;
  /** Time the server itself did not read (its parser not started yet, or behind): not the client's. */
  notReadingMs: number;
  /** Chosen as the request arrives: routers mounted at a path rewrite `req.path` while they run. */
  answer: SlowBodyAnswer;
}

/**
 * A request body that stops arriving, or trickles in, is answered 408 and
 * its connection closed, like a web server's request-read timeout
 * (Apache's mod_reqtimeout): a body has `timeoutMs`, and every
 * `minBytesPerSecond` bytes received buy it one more second. A body is read
 * before any credential is checked, and while it is read it holds its bytes
 * of the upload memory budget (`holdParsedBodies`, the upload interceptor):
 * without this, a client sending a byte now and then held a megabyte, or an
 * upload's worth, for Node's five-minute request timeout, and a few hundred
 * such clients, signed in or not, kept every other upload and JSON body out.
 *
 * Only time the server spends reading counts: while the body waits for the
 * server (the route's guard still checking the credential, or data read
 * but not yet taken), the client is not slow. The socket's byte count says
 * what arrived, so no listener is added to the body stream (which would
 * start it flowing before its parser listens).
 */
export function refuseSlowBodies(pace: BodyPace, answerFor: (req: Request) => SlowBodyAnswer | undefined = () => undefined) {
  const watched = new Set<Watched>();
  let timer: NodeJS.Timeout | undefined;

  const sweep = (): void => {
    const now = Date.now();
    for (const w of watched) {
      if (w.req.complete || w.res.closed || w.res.headersSent) {
        watched.delete(w);
        continue;
      }
      if (w.req.readableFlowing !== true || w.req.readableLength > 0) {
        w.notReadingMs += SWEEP_MS;
        continue;
      }
      const received = (w.req.socket?.bytesRead ?? w.startBytes) - w.startBytes;
      const allowedMs = pace.timeoutMs + (received * 1000) / pace.minBytesPerSecond + w.notReadingMs;
      if (now - w.startedAt <= allowedMs) continue;
      watched.delete(w);
      answerTooSlow(w.res, pace, w.answer);
    }
    if (watched.size === 0 && timer) {
      clearInterval(timer);
      timer = undefined;
    }
  };

  return (req: Request, res: Response, next: NextFunction): void => {
    if (announcesBody(req) && !req.complete) {
      watched.add({ req, res, startedAt: Date.now(), startBytes: req.socket?.bytesRead ?? 0, notReadingMs: 0, answer: answerFor(req) ?? tooSlowProblem });
      timer ??= setInterval(sweep, SWEEP_MS).unref();
    }
    next();
  };
}

/** Writes the 408 answer; problem+json unless the path's clients read another form (the web pages' HTML, the OAuth endpoints' RFC 6749 JSON). */
export type SlowBodyAnswer = (res: Response, detail: string) => void;

const tooSlowProblem: SlowBodyAnswer = (res, detail) => sendProblem(res, { status: 408, type: 'HTTP.408', title: titleFor(408), detail });

/** The 408, then the connection closes: what the client still sends is dropped (closeAfterAnswer), and its reader fails as if the client had left. */
function answerTooSlow(res: Response, pace: BodyPace, answer: SlowBodyAnswer): void {
  closeAfterAnswer(res);
  answer(res, `The request body arrived too slowly: ${bodyPaceRule(pace)}`);
}
