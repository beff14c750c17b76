import { isIP } from 'node:net';
import path from 'node:path';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Thrown at start when an environment variable holds a value we cannot use. */
export class ConfigError extends Error {
  constructor(variable: string, problem: string) {
    super(`Invalid configuration: ${variable} ${problem}`);
  }
}

/**
 * Caps on spreadsheets given to the importer (DESIGN.md §8). Every one is an
 * environment variable; docs/IMPORT.md says what each guards and how to raise it.
 * The byte cap of the upload itself is MAX_UPLOAD_BYTES.
 */
export interface ImportLimits {
  /** Rows of the sheet, header included (IMPORT_MAX_ROWS). */
  maxRows: number;
  /** Columns of the sheet (IMPORT_MAX_COLUMNS). */
  maxColumns: number;
  /** Characters in one cell (IMPORT_MAX_CELL_CHARS). */
  maxCellChars: number;
  /** Wall-clock time one XLSX/ODS parse may take (IMPORT_PARSE_TIMEOUT_MS). */
  parseTimeoutMs: number;
  /** Old-generation heap of the parsing worker, in MiB (IMPORT_WORKER_HEAP_MB). */
  workerHeapMb: number;
  /** Workers parsing at the same time; further parses wait (IMPORT_PARALLEL_PARSES). */
  parallelParses: number;
  /** Entries in the zip of an XLSX/ODS file (IMPORT_ZIP_MAX_ENTRIES). */
  zipMaxEntries: number;
  /** Decompressed bytes of one zip entry (IMPORT_ZIP_MAX_ENTRY_BYTES). */
  zipMaxEntryBytes: number;
  /** Decompressed bytes of all entries together (IMPORT_ZIP_MAX_TOTAL_BYTES). */
  zipMaxTotalBytes: number;
  /** Decompressed/compressed size of an entry of 1 MiB or more (IMPORT_ZIP_MAX_RATIO). */
  zipMaxRatio: number;
  /** Discovered spreadsheets one user may have waiting for their import at once (IMPORT_UPLOADS_PER_USER_MAX). */
  uploadsPerUser: number;
  /** Stored (gzipped) bytes of those together (IMPORT_UPLOAD_BYTES_PER_USER_MAX). */
  uploadBytesPerUser: number;
}

/**
 * Which proxies' X-Forwarded-* headers name the client, in a form Express's
 * `trust proxy` takes: none, a number of hops, or the proxies' addresses,
 * CIDR ranges and range names.
 */
export type TrustProxy = false | number | string[];

/** Typed configuration, read once from the environment (DESIGN.md §1). */
export class AppConfig {
  readonly port: number;
  readonly host: string;
  readonly databaseUrl: string | undefined;
  /** Hot statements as named prepared statements on PostgreSQL (DATABASE_PREPARED_STATEMENTS). */
  readonly preparedStatements: boolean;
  /** Longest a statement of a request may run on PostgreSQL, in ms; 0 = no limit (DATABASE_STATEMENT_TIMEOUT_MS). Migrations are not bound. */
  readonly databaseStatementTimeoutMs: number;
  /** How long a start waits for a PostgreSQL not reachable yet, in ms; 0 = one attempt (DATABASE_START_WAIT_MS). */
  readonly databaseStartWaitMs: number;
  readonly dataDir: string;
  readonly baseUrl: string;
  /** An origin only: the pages and /oauth/* are served at its root. */
  readonly authUrl: string;
  /** Express's `trust proxy`: whose X-Forwarded-For and X-Forwarded-Proto count (TRUST_PROXY). */
  readonly trustProxy: TrustProxy;
  readonly maxUploadBytes: number;
  /** Bytes of uploads and file-URL downloads all requests may hold in memory at once (UPLOAD_MEMORY_MAX_BYTES). */
  readonly uploadMemoryMaxBytes: number;
  /** Of those, what one user's requests may hold together (UPLOAD_MEMORY_USER_SHARE_PERCENT of them, at least one upload). */
  readonly uploadMemoryUserMaxBytes: number;
  /** A request body's time to arrive, in ms, before it must keep a pace (REQUEST_BODY_TIMEOUT_MS). */
  readonly requestBodyTimeoutMs: number;
  /** The pace: each this many bytes received buy a body one more second (REQUEST_BODY_MIN_BYTES_PER_SECOND). */
  readonly requestBodyMinBytesPerSecond: number;
  /** How long a request's head (request line and headers) may take to arrive, in ms (REQUEST_HEADERS_TIMEOUT_MS). */
  readonly requestHeadersTimeoutMs: number;
  readonly allowSignup: boolean;
  readonly fileUrlAllowPrivate: boolean;
  readonly migrationsRun: boolean;
  /** Requests per minute allowed for one credential. */
  readonly rateLimitPerMinute: number;
  /** Live (unrevoked) API keys one user may hold (API_KEYS_PER_USER_MAX): the rate limit counts per key. */
  readonly apiKeysPerUserMax: number;
  /** The deepest a card may be (MAX_CARD_DEPTH; the top-level card is at 0): a subtree's writes cost its size times its depth. */
  readonly maxCardDepth: number;
  readonly importLimits: ImportLimits;
  /** On SIGTERM: stop accepting, finish in-flight requests, exit by this deadline. */
  readonly shutdownGraceMs: number;
  readonly logLevel: LogLevel;
  /** Port of the Prometheus `/metrics` listener; undefined = metrics off. */
  readonly metricsPort: number | undefined;
  readonly metricsHost: string;
  /** V8's old-generation growth between full collections, in percent; 0 = V8's own (HEAP_GROWING_PERCENT). */
  readonly heapGrowingPercent: number;

  constructor(values: Omit<AppConfig, never>) {
    Object.assign(this, values);
  }

  get embedded(): boolean {
    return this.databaseUrl === undefined;
  }
}

type Env = Record<string, string | undefined>;

function readInt(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(name, `must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

function readBool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const v = raw.trim().toLowerCase();
  if (['true', '1', 'yes'].includes(v)) return true;
  if (['false', '0', 'no'].includes(v)) return false;
  throw new ConfigError(name, `must be true or false, got "${raw}"`);
}

function readChoice<T extends string>(env: Env, name: string, fallback: T, choices: readonly T[]): T {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return fallback;
  if (!choices.includes(raw as T)) throw new ConfigError(name, `must be one of ${choices.join(', ')}, got "${raw}"`);
  return raw as T;
}

function readUrl(env: Env, name: string, fallback: string | undefined, protocols: string[]): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    // DATABASE_URL may hold a password (a `/` in it is what made it unreadable): all up to the last `@` is not echoed.
    throw new ConfigError(name, `must be a URL, got "${raw.replace(/\/\/.*@/, '//…@')}"`);
  }
  if (!protocols.includes(url.protocol)) {
    throw new ConfigError(name, `must use ${protocols.join(' or ')}, got "${url.protocol}"`);
  }
  return raw.replace(/\/+$/, '');
}

/** A refused URL as its error quotes it: not at all when it holds credentials. */
const shownUrl = (url: URL, raw: string) => (url.username || url.password ? '(not shown: it holds credentials)' : `"${raw}"`);

/**
 * The public base of API calls: Link, Location and OpenAPI's servers are made
 * by appending paths to it, so a query, a fragment or credentials in it
 * would end up inside every link (`https://x/api?a=1/cards/5`).
 */
function readBase(env: Env, name: string, fallback: string): string {
  const raw = readUrl(env, name, fallback, ['http:', 'https:'])!;
  const url = new URL(raw);
  if (/[?#]/.test(raw) || url.username || url.password) {
    throw new ConfigError(name, `must be scheme://host[:port][/path], with no query, fragment or credentials (links are made by appending paths to it), got ${shownUrl(url, raw)}`);
  }
  return raw;
}

/** An origin's URL: what the pages need, since they are served at the root of theirs (a path before them would be ignored). */
function readOrigin(env: Env, name: string, fallback: string): string {
  const url = new URL(readUrl(env, name, fallback, ['http:', 'https:'])!);
  if (url.href !== `${url.origin}/`) {
    throw new ConfigError(name, `must be an origin, scheme://host[:port], with no path, query, fragment or credentials (the pages are served at its root), got ${shownUrl(url, env[name] ?? '')}`);
  }
  return url.origin;
}

const PROXY_RANGE_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

/**
 * TRUST_PROXY: loopback by default (a proxy on the same machine). Never
 * "every address" (`true`): any client could then choose its own address,
 * and with it a fresh rate-limit bucket per request.
 */
function readTrustProxy(env: Env): TrustProxy {
  const raw = env.TRUST_PROXY?.trim() ?? '';
  if (raw === '') return ['loopback'];
  if (['false', 'none'].includes(raw.toLowerCase())) return false;
  if (/^\d+$/.test(raw)) return readInt(env, 'TRUST_PROXY', 0, 0, 100);
  const entries = raw.split(',').map((entry) => entry.trim());
  const named = (entry: string) => PROXY_RANGE_NAMES.includes(entry.toLowerCase());
  const bad = entries.find((entry) => !named(entry) && !isAddressOrRange(entry));
  if (bad !== undefined) {
    throw new ConfigError(
      'TRUST_PROXY',
      `must be false, none, a number of proxies, or a comma list of the proxies' addresses, CIDR ranges, loopback, linklocal or uniquelocal, got "${bad}"`,
    );
  }
  return entries.map((entry) => (named(entry) ? entry.toLowerCase() : entry));
}

/** An IP address, or a CIDR range (`172.17.0.0/16`, `fd00::/8`). */
function isAddressOrRange(entry: string): boolean {
  const [address, prefix, ...rest] = entry.split('/');
  const version = isIP(address);
  if (version === 0 || rest.length > 0) return false;
  // A /0 range is everyone (which `true` is refused for), and Express's proxy-addr throws on it at start.
  return prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) >= 1 && Number(prefix) <= (version === 4 ? 32 : 128));
}

function readHost(env: Env, name: string): string {
  const host = env[name]?.trim() || '127.0.0.1';
  if (/\s/.test(host)) throw new ConfigError(name, `must be a host name or address, got "${host}"`);
  return host;
}

export function loadConfig(env: Env = process.env): AppConfig {
  const host = readHost(env, 'HOST');
  const port = readInt(env, 'PORT', 3000, 0, 65535);
  // The public addresses follow PORT by default, so links and file URLs work on another port too (0: any, unknown here).
  const local = `http://localhost:${port || 3000}`;
  const maxUploadBytes = readInt(env, 'MAX_UPLOAD_BYTES', 20 * 1024 * 1024, 1, 2 ** 40);
  const uploadMemoryMaxBytes = readUploadMemory(env, maxUploadBytes);
  return new AppConfig({
    port,
    host,
    databaseUrl: readUrl(env, 'DATABASE_URL', undefined, ['postgres:', 'postgresql:']),
    preparedStatements: readBool(env, 'DATABASE_PREPARED_STATEMENTS', true),
    // 60 s: twenty times the longest statement measured (a 100 000-card subtree deleted
    // in 3 s, docs/PERFORMANCE.md), and what proxies in front commonly wait. PostgreSQL
    // takes up to 2^31-1 ms.
    databaseStatementTimeoutMs: readInt(env, 'DATABASE_STATEMENT_TIMEOUT_MS', 60_000, 0, 2_147_483_647),
    // 27 s: TypeOrmModule's own retries (10 attempts 3 s apart) before the start had its wait.
    databaseStartWaitMs: readInt(env, 'DATABASE_START_WAIT_MS', 27_000, 0, 3_600_000),
    dataDir: path.resolve(env.DATA_DIR?.trim() || './data'),
    baseUrl: readBase(env, 'BASE_URL', `${local}/api/1.0`),
    authUrl: readOrigin(env, 'AUTH_URL', local),
    trustProxy: readTrustProxy(env),
    maxUploadBytes,
    uploadMemoryMaxBytes,
    uploadMemoryUserMaxBytes: readUserShare(env, uploadMemoryMaxBytes, maxUploadBytes),
    // Apache's mod_reqtimeout defaults (body=20,MinRate=500): a body that stops
    // is cut after 20 s instead of Node's 5 minutes for a whole request (which
    // still bounds a body that keeps the pace).
    requestBodyTimeoutMs: readInt(env, 'REQUEST_BODY_TIMEOUT_MS', 20_000, 100, 3_600_000),
    requestBodyMinBytesPerSecond: readInt(env, 'REQUEST_BODY_MIN_BYTES_PER_SECOND', 500, 1, 2 ** 30),
    // mod_reqtimeout's header=20 too, instead of Node's 60 s: a client that
    // sends its head a byte at a time holds a connection for no longer. At
    // most Node's 5 minutes for a whole request, which it must not pass.
    requestHeadersTimeoutMs: readInt(env, 'REQUEST_HEADERS_TIMEOUT_MS', 20_000, 100, 300_000),
    allowSignup: readBool(env, 'ALLOW_SIGNUP', true),
    fileUrlAllowPrivate: readBool(env, 'FILE_URL_ALLOW_PRIVATE', false),
    migrationsRun: readBool(env, 'MIGRATIONS_RUN', true),
    rateLimitPerMinute: readInt(env, 'RATE_LIMIT_PER_MINUTE', 6000, 1, 10_000_000),
    apiKeysPerUserMax: readInt(env, 'API_KEYS_PER_USER_MAX', 100, 1, 1_000_000),
    maxCardDepth: readInt(env, 'MAX_CARD_DEPTH', 1000, 1, 1_000_000),
    importLimits: readImportLimits(env),
    shutdownGraceMs: readInt(env, 'SHUTDOWN_GRACE_MS', 10_000, 0, 3_600_000),
    logLevel: readChoice(env, 'LOG_LEVEL', 'info', LOG_LEVELS),
    metricsPort: env.METRICS_PORT?.trim() ? readInt(env, 'METRICS_PORT', 0, 1, 65535) : undefined,
    metricsHost: readHost(env, 'METRICS_HOST'),
    heapGrowingPercent: readInt(env, 'HEAP_GROWING_PERCENT', 50, 0, 1000),
  } as AppConfig);
}

const MIB = 1024 * 1024;

/** Room for a multipart upload's envelope and a few small text parts around its file (MAX_UPLOAD_BYTES counts the file). */
export const UPLOAD_ENVELOPE_BYTES = 64 * 1024;

/**
 * 256 MiB: a dozen uploads at the default cap at once, well inside a small
 * container. Never less than one upload at the cap with its envelope, which
 * could otherwise never be taken.
 */
function readUploadMemory(env: Env, maxUploadBytes: number): number {
  const least = maxUploadBytes + UPLOAD_ENVELOPE_BYTES;
  const value = readInt(env, 'UPLOAD_MEMORY_MAX_BYTES', Math.max(256 * MIB, least), 1, 2 ** 42);
  if (value < least) {
    throw new ConfigError('UPLOAD_MEMORY_MAX_BYTES', `must hold one upload at MAX_UPLOAD_BYTES with its multipart envelope (at least ${least}), got ${value}`);
  }
  return value;
}

/**
 * A quarter by default: one user's slow uploads (a slow body holds its bytes
 * as long as it takes) can no longer hold the whole budget. Never less than
 * one upload at the cap with its envelope, which could otherwise never be taken.
 */
function readUserShare(env: Env, budget: number, maxUploadBytes: number): number {
  const percent = readInt(env, 'UPLOAD_MEMORY_USER_SHARE_PERCENT', 25, 1, 100);
  return Math.min(budget, Math.max(Math.floor((budget * percent) / 100), maxUploadBytes + UPLOAD_ENVELOPE_BYTES));
}

function readImportLimits(env: Env): ImportLimits {
  return {
    maxRows: readInt(env, 'IMPORT_MAX_ROWS', 200_000, 1, 10_000_000),
    maxColumns: readInt(env, 'IMPORT_MAX_COLUMNS', 200, 1, 16_384),
    maxCellChars: readInt(env, 'IMPORT_MAX_CELL_CHARS', 100_000, 1, 100_000_000),
    parseTimeoutMs: readInt(env, 'IMPORT_PARSE_TIMEOUT_MS', 30_000, 100, 3_600_000),
    workerHeapMb: readInt(env, 'IMPORT_WORKER_HEAP_MB', 256, 16, 65_536),
    parallelParses: readInt(env, 'IMPORT_PARALLEL_PARSES', 2, 1, 256),
    zipMaxEntries: readInt(env, 'IMPORT_ZIP_MAX_ENTRIES', 1000, 1, 1_000_000),
    zipMaxEntryBytes: readInt(env, 'IMPORT_ZIP_MAX_ENTRY_BYTES', 128 * MIB, 1, 2 ** 40),
    zipMaxTotalBytes: readInt(env, 'IMPORT_ZIP_MAX_TOTAL_BYTES', 256 * MIB, 1, 2 ** 40),
    zipMaxRatio: readInt(env, 'IMPORT_ZIP_MAX_RATIO', 100, 1, 1_000_000),
    uploadsPerUser: readInt(env, 'IMPORT_UPLOADS_PER_USER_MAX', 50, 1, 1_000_000),
    uploadBytesPerUser: readInt(env, 'IMPORT_UPLOAD_BYTES_PER_USER_MAX', 256 * MIB, 1, 2 ** 42),
  };
}
