import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { LoggerService } from '@nestjs/common';
import { pino, type Logger } from 'pino';
import type { LogLevel } from '../config/app-config.js';

/** Lines are written once this many bytes wait, or after `LOG_FLUSH_MS`. */
const LOG_BUFFER_BYTES = 4096;
/** The longest a request's line waits before it is written. */
export const LOG_FLUSH_MS = 250;

/**
 * One JSON object per line on stdout (`fd` in tests); `LOG_LEVEL` picks how
 * much. Lines are buffered and written a few kilobytes at a time, at the
 * latest after `LOG_FLUSH_MS`: one write per request line was a fifth of the
 * server's CPU for a cheap request (docs/PERFORMANCE.md, issue 15, fourth
 * pass). An error line, and every message of the server itself (start-up,
 * shutdown), is written at once; what is buffered is written when the
 * process exits (pino flushes its destination on exit), and lost only if the
 * process is killed outright.
 */
export function createRootLogger(level: LogLevel, fd = 1): Logger {
  const options = loggerOptions(level);
  if (level === 'silent') return pino(options);
  const destination = pino.destination({ dest: fd, sync: false, minLength: LOG_BUFFER_BYTES });
  const timer = setInterval(() => destination.flush(), LOG_FLUSH_MS).unref();
  destination.once('close', () => clearInterval(timer));
  return pino(options, destination);
}

/**
 * The CLI's logger: the same JSON lines, on stderr (stdout carries the
 * command's answer) and written at once, as a command is short and exits.
 */
export function createCliLogger(level: LogLevel): Logger {
  return pino(loggerOptions(level), pino.destination({ dest: 2, sync: true }));
}

function loggerOptions(level: LogLevel) {
  return { level, base: { service: 'cardwork' }, timestamp: pino.stdTimeFunctions.isoTime };
}

/**
 * Starts writing what the logger's destination holds, without waiting for
 * it. Not pino's `logger.flush()`: that one registers a callback on the
 * destination for every call (a 'drain' and an 'error' listener, then an
 * fsync), which piled up while a write to a pipe was under way (Nest's
 * start-up messages: MaxListenersExceededWarning on stderr).
 */
export function writeNow(logger: Logger): void {
  const destination = (logger as unknown as Record<symbol, { flush?: () => void } | undefined>)[pino.symbols.streamSym];
  destination?.flush?.();
}

/** A request id a client or a proxy may choose; anything else is replaced by a UUID. */
const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

type LoggedRequest = IncomingMessage & { id?: string; originalUrl?: string; ip?: string };
type LoggedResponse = ServerResponse & { err?: unknown };

/**
 * One log line per request (method, route URL, status, duration) carrying the
 * request id that is also echoed as `X-Request-Id`. A 5xx is logged at error
 * level with the error and its stack (the problem filter hands it over as
 * `res.err`); a request closed before its answer was complete (the client
 * left, or the shutdown cut it) at warn. Credentials are never logged: the line names no header, and
 * the values of query parameters that may carry one are replaced
 * (`redactQuery`). The client address is Express's `req.ip`, which follows
 * the `trust proxy` setting (behind a proxy, the socket's address is the
 * proxy's).
 *
 * Written by hand rather than with pino-http: that one builds two child
 * loggers and serialises the request for every request, whether or not the
 * line is written, and that was a tenth of the server's CPU for a cheap
 * request (docs/PERFORMANCE.md, issue 15, fourth pass). The line is the one
 * pino-http wrote.
 */
export function requestLogging(logger: Logger) {
  return (req: LoggedRequest, res: LoggedResponse, next: () => void): void => {
    const started = Date.now();
    const given = req.headers['x-request-id'];
    const id = typeof given === 'string' && CLIENT_REQUEST_ID.test(given) ? given : randomUUID();
    req.id = id;
    res.setHeader('X-Request-Id', id);
    // 'close' follows 'finish' on every response, and comes alone when the client goes away first.
    res.once('close', () => logRequest(logger, req, res, Date.now() - started));
    next();
  };
}

function logRequest(logger: Logger, req: LoggedRequest, res: LoggedResponse, responseTime: number): void {
  const failed = res.err !== undefined || res.statusCode >= 500;
  // Closed before its answer was complete: the client went away, or the shutdown cut it at SHUTDOWN_GRACE_MS.
  const cut = !failed && !res.writableFinished;
  const level = failed ? 'error' : cut ? 'warn' : 'info';
  if (!logger.isLevelEnabled(level)) return;
  const line: Record<string, unknown> = {
    req: { id: req.id, method: req.method, url: redactQuery(req.originalUrl ?? req.url ?? ''), remoteAddress: req.ip ?? req.socket?.remoteAddress },
    // No status was sent when the headers were not.
    res: { statusCode: res.headersSent ? res.statusCode : null },
    responseTime,
  };
  if (cut) return logger.warn(line, 'request closed before its answer was complete');
  if (!failed) return logger.info(line, 'request completed');
  const err = res.err ?? new Error(`failed with status code ${res.statusCode}`);
  logger.error({ ...line, err }, 'request errored');
  writeNow(logger);
}

/**
 * Query parameter names whose values may be a credential (compared without
 * case): API keys, passwords, OAuth secrets, tokens, codes and verifiers.
 * Clients put them in a query string by mistake (the API refuses them there,
 * but the line is written whatever the answer); a name that merely looks like
 * one is redacted too, as a lost value costs less than a leaked key.
 */
const SECRET_PARAMETER = /password|passwd|^pass$|secret|token|key$|^code(_verifier)?$|^auth(orization)?$|credential|signature|^sig$/i;
/** One of the service's own credentials (cwk_ API key, cws_ client secret, cwa_/cwr_ tokens, …), under any name or none. */
const OWN_CREDENTIAL = /cw[a-z]_/i;
export const REDACTED = '[redacted]';

/**
 * The URL with the value of each query parameter that may be a credential
 * replaced by `[redacted]`: named like one, holding one of ours, or with a
 * name that does not decode. The rest is kept as sent.
 */
export function redactQuery(url: string): string {
  const start = url.indexOf('?');
  if (start < 0) return url;
  const pairs = url
    .slice(start + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const [name, value] = eq < 0 ? ['', pair] : [pair.slice(0, eq), pair.slice(eq + 1)];
      const decoded = decodedName(name);
      if (decoded !== undefined && !SECRET_PARAMETER.test(bareName(decoded)) && !OWN_CREDENTIAL.test(decodedName(value) ?? value)) return pair;
      return eq < 0 ? REDACTED : `${name}=${REDACTED}`;
    });
  return `${url.slice(0, start)}?${pairs.join('&')}`;
}

/**
 * A decoded name without what frames it (`api_key[]`, `api_key\0`, ` key `):
 * the query parser or a client may read those as the name itself.
 */
const bareName = (name: string) => name.replace(/^[^a-z0-9]+|[^a-z0-9]+$/gi, '');

/** A query parameter's name or value as the server reads it (`+` and %-escapes decoded); undefined when it does not decode. */
function decodedName(raw: string): string | undefined {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
}

/** Nest's own messages (start-up, shutdown) through the same JSON logger. */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, ...rest: unknown[]): void {
    this.write('info', message, rest);
  }
  error(message: unknown, ...rest: unknown[]): void {
    this.write('error', message, rest);
  }
  warn(message: unknown, ...rest: unknown[]): void {
    this.write('warn', message, rest);
  }
  debug(message: unknown, ...rest: unknown[]): void {
    this.write('debug', message, rest);
  }
  verbose(message: unknown, ...rest: unknown[]): void {
    this.write('trace', message, rest);
  }
  fatal(message: unknown, ...rest: unknown[]): void {
    this.write('fatal', message, rest);
  }

  /** Nest passes the context (a class name) last. */
  private write(level: Exclude<LogLevel, 'silent'>, message: unknown, rest: unknown[]): void {
    const context = typeof rest.at(-1) === 'string' ? (rest.at(-1) as string) : undefined;
    if (message instanceof Error) this.logger[level]({ context, err: message }, message.message);
    else if (isEntry(message)) this.logger[level]({ context, ...message, msg: undefined }, message.msg);
    else this.logger[level]({ context }, typeof message === 'string' ? message : JSON.stringify(message));
    writeNow(this.logger);
  }
}

/** A message with fields of its own (`{ msg, ...fields }`): the fields become the line's, beside `msg`. */
function isEntry(message: unknown): message is { msg: string } & Record<string, unknown> {
  return typeof message === 'object' && message !== null && Object.getPrototypeOf(message) === Object.prototype && typeof (message as { msg?: unknown }).msg === 'string';
}
