import { describe, expect, it } from '@jest/globals';
import { ConfigError, loadConfig } from './app-config.js';

describe('loadConfig', () => {
  it('uses the documented defaults', () => {
    const c = loadConfig({});
    expect(c.port).toBe(3000);
    expect(c.host).toBe('127.0.0.1');
    expect(c.embedded).toBe(true);
    expect(c.maxUploadBytes).toBe(20 * 1024 * 1024);
    expect(c.baseUrl).toBe('http://localhost:3000/api/1.0');
    expect(c.shutdownGraceMs).toBe(10_000);
    expect(c.logLevel).toBe('info');
    expect(c.metricsPort).toBeUndefined();
    expect(c.heapGrowingPercent).toBe(50);
  });

  it('makes the public addresses follow PORT unless BASE_URL and AUTH_URL are given', () => {
    const c = loadConfig({ PORT: '3104' });
    expect([c.baseUrl, c.authUrl]).toEqual(['http://localhost:3104/api/1.0', 'http://localhost:3104']);
    const any = loadConfig({ PORT: '0' });
    expect([any.baseUrl, any.authUrl]).toEqual(['http://localhost:3000/api/1.0', 'http://localhost:3000']);
    const given = loadConfig({ PORT: '3104', BASE_URL: 'https://cards.example.com/api/1.0', AUTH_URL: 'https://cards.example.com' });
    expect([given.baseUrl, given.authUrl]).toEqual(['https://cards.example.com/api/1.0', 'https://cards.example.com']);
  });

  it('takes AUTH_URL as an origin only: the pages are served at its root', () => {
    expect(loadConfig({ AUTH_URL: 'https://Cards.example.com:443/' }).authUrl).toBe('https://cards.example.com');
    expect(loadConfig({ AUTH_URL: 'http://cards.example.com:8080' }).authUrl).toBe('http://cards.example.com:8080');
    for (const bad of ['https://cards.example.com/cw', 'https://cards.example.com/?', 'https://cards.example.com?a=1', 'https://cards.example.com/#x', 'https://u:p@cards.example.com']) {
      expect(() => loadConfig({ AUTH_URL: bad })).toThrow(/^Invalid configuration: AUTH_URL must be an origin, scheme:\/\/host\[:port\]/);
    }
  });

  it('never echoes the credentials of a DATABASE_URL it cannot read', () => {
    expect(() => loadConfig({ DATABASE_URL: 'postgres://u:Secret99@host:abc/db' })).toThrow('DATABASE_URL must be a URL, got "postgres://…@host:abc/db"');
    expect(() => loadConfig({ DATABASE_URL: 'postgres://app:Zx9/k+Qw==@db:5432/cardwork' })).toThrow('DATABASE_URL must be a URL, got "postgres://…@db:5432/cardwork"');
    expect(() => loadConfig({ AUTH_URL: 'https://admin:s3cret@auth.example.com' })).toThrow(/AUTH_URL .* got \(not shown: it holds credentials\)$/);
  });

  it('refuses a BASE_URL with a query, a fragment or credentials: links are made by appending paths to it', () => {
    expect(loadConfig({ BASE_URL: 'https://cards.example.com/v1/' }).baseUrl).toBe('https://cards.example.com/v1');
    for (const bad of ['https://cards.example.com/api/1.0?a=1', 'https://cards.example.com/api/1.0?', 'https://cards.example.com/api/1.0#x']) {
      expect(() => loadConfig({ BASE_URL: bad })).toThrow(/^Invalid configuration: BASE_URL must be scheme:\/\/host\[:port\]\[\/path\], with no query/);
    }
    expect(() => loadConfig({ BASE_URL: 'https://u:secret@cards.example.com/api/1.0' })).toThrow(/got \(not shown: it holds credentials\)$/);
  });

  it("reads TRUST_PROXY as Express's trust proxy: loopback by default, none, a hop count or a list of addresses, ranges and range names", () => {
    expect(loadConfig({}).trustProxy).toEqual(['loopback']);
    expect(loadConfig({ TRUST_PROXY: 'false' }).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: ' None ' }).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ TRUST_PROXY: '172.17.0.1, 10.0.0.0/8,fd00::/8 , ::1, LinkLocal,uniquelocal' }).trustProxy).toEqual([
      '172.17.0.1',
      '10.0.0.0/8',
      'fd00::/8',
      '::1',
      'linklocal',
      'uniquelocal',
    ]);
    for (const bad of ['true', 'all', '1.2.3', '10.0.0.0/33', '::1/129', '10.0.0.0/8/8', 'loopback,', 'proxy.example.com', '-1', '101', '0.0.0.0/0', '::/0']) {
      expect(() => loadConfig({ TRUST_PROXY: bad })).toThrow(/^Invalid configuration: TRUST_PROXY must be /);
    }
  });

  it('refuses a METRICS_HOST that is no host, as HOST', () => {
    expect(() => loadConfig({ METRICS_PORT: '9464', METRICS_HOST: 'bad host' })).toThrow(/METRICS_HOST/);
    expect(() => loadConfig({ HOST: 'bad host' })).toThrow(/HOST/);
  });

  it('reads the operability settings', () => {
    const c = loadConfig({ SHUTDOWN_GRACE_MS: '2500', LOG_LEVEL: 'Silent', METRICS_PORT: '9464' });
    expect(c.shutdownGraceMs).toBe(2500);
    expect(c.logLevel).toBe('silent');
    expect(c.metricsPort).toBe(9464);
    expect(() => loadConfig({ LOG_LEVEL: 'loud' })).toThrow(/LOG_LEVEL/);
    expect(() => loadConfig({ METRICS_PORT: '0' })).toThrow(/METRICS_PORT/);
    expect(() => loadConfig({ SHUTDOWN_GRACE_MS: '-1' })).toThrow(/SHUTDOWN_GRACE_MS/);
    expect(loadConfig({ HEAP_GROWING_PERCENT: '0' }).heapGrowingPercent).toBe(0);
    expect(() => loadConfig({ HEAP_GROWING_PERCENT: 'less' })).toThrow(/HEAP_GROWING_PERCENT/);
  });

  it("reads a request body's pace: 20 s, then 500 bytes a second", () => {
    expect(loadConfig({})).toMatchObject({ requestBodyTimeoutMs: 20_000, requestBodyMinBytesPerSecond: 500 });
    expect(loadConfig({ REQUEST_BODY_TIMEOUT_MS: '5000', REQUEST_BODY_MIN_BYTES_PER_SECOND: '100' })).toMatchObject({
      requestBodyTimeoutMs: 5000,
      requestBodyMinBytesPerSecond: 100,
    });
    expect(() => loadConfig({ REQUEST_BODY_TIMEOUT_MS: '0' })).toThrow(/REQUEST_BODY_TIMEOUT_MS/);
    expect(() => loadConfig({ REQUEST_BODY_MIN_BYTES_PER_SECOND: '0' })).toThrow(/REQUEST_BODY_MIN_BYTES_PER_SECOND/);
  });

  it("reads a request head's time: 20 s, at most Node's 5 minutes for a whole request", () => {
    expect(loadConfig({}).requestHeadersTimeoutMs).toBe(20_000);
    expect(loadConfig({ REQUEST_HEADERS_TIMEOUT_MS: '1500' }).requestHeadersTimeoutMs).toBe(1500);
    expect(() => loadConfig({ REQUEST_HEADERS_TIMEOUT_MS: '300001' })).toThrow(/REQUEST_HEADERS_TIMEOUT_MS/);
  });

  it("reads how long a start waits for the database: 27 s, 0 for one attempt, at most an hour", () => {
    expect(loadConfig({}).databaseStartWaitMs).toBe(27_000);
    expect(loadConfig({ DATABASE_START_WAIT_MS: '0' }).databaseStartWaitMs).toBe(0);
    expect(() => loadConfig({ DATABASE_START_WAIT_MS: '-1' })).toThrow(/DATABASE_START_WAIT_MS/);
    expect(() => loadConfig({ DATABASE_START_WAIT_MS: '3600001' })).toThrow(/DATABASE_START_WAIT_MS/);
  });

  it('names the bad variable', () => {
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow(/PORT/);
    expect(() => loadConfig({ DATABASE_URL: 'mysql://x' })).toThrow(/DATABASE_URL/);
    expect(() => loadConfig({ ALLOW_SIGNUP: 'maybe' })).toThrow(ConfigError);
    expect(() => loadConfig({ MAX_UPLOAD_BYTES: '0' })).toThrow(/MAX_UPLOAD_BYTES/);
  });

  it('reads the importer caps, each with a default and a range', () => {
    expect(loadConfig({}).importLimits).toMatchObject({ maxRows: 200_000, maxColumns: 200, maxCellChars: 100_000 });
    const c = loadConfig({ IMPORT_MAX_ROWS: '500000', IMPORT_ZIP_MAX_RATIO: '300', IMPORT_PARSE_TIMEOUT_MS: '5000' });
    expect(c.importLimits).toMatchObject({ maxRows: 500_000, zipMaxRatio: 300, parseTimeoutMs: 5000 });
    expect(() => loadConfig({ IMPORT_MAX_ROWS: 'many' })).toThrow(/IMPORT_MAX_ROWS/);
    expect(() => loadConfig({ IMPORT_MAX_COLUMNS: '0' })).toThrow(/IMPORT_MAX_COLUMNS/);
    expect(() => loadConfig({ IMPORT_WORKER_HEAP_MB: '8' })).toThrow(/IMPORT_WORKER_HEAP_MB/);
    expect(loadConfig({}).importLimits).toMatchObject({ uploadsPerUser: 50, uploadBytesPerUser: 256 * 1024 * 1024 });
    expect(loadConfig({ IMPORT_UPLOADS_PER_USER_MAX: '5', IMPORT_UPLOAD_BYTES_PER_USER_MAX: '1000' }).importLimits).toMatchObject({ uploadsPerUser: 5, uploadBytesPerUser: 1000 });
    expect(() => loadConfig({ IMPORT_UPLOADS_PER_USER_MAX: '0' })).toThrow(/IMPORT_UPLOADS_PER_USER_MAX/);
  });

  it('reads the upload memory budget, which must hold one upload at the cap', () => {
    expect(loadConfig({}).uploadMemoryMaxBytes).toBe(256 * 1024 * 1024);
    expect(loadConfig({ UPLOAD_MEMORY_MAX_BYTES: '300000', MAX_UPLOAD_BYTES: '100000' }).uploadMemoryMaxBytes).toBe(300_000);
    // a cap above the default budget raises the default to one upload
    expect(loadConfig({ MAX_UPLOAD_BYTES: String(512 * 1024 * 1024) }).uploadMemoryMaxBytes).toBe(512 * 1024 * 1024 + 64 * 1024);
    expect(() => loadConfig({ UPLOAD_MEMORY_MAX_BYTES: 'lots' })).toThrow(/UPLOAD_MEMORY_MAX_BYTES/);
    expect(() => loadConfig({ UPLOAD_MEMORY_MAX_BYTES: '100000', MAX_UPLOAD_BYTES: '100000' })).toThrow(/UPLOAD_MEMORY_MAX_BYTES.*at least 165536/);
  });

  it('reads one user\'s share of the upload memory: a quarter by default, never less than one upload', () => {
    expect(loadConfig({}).uploadMemoryUserMaxBytes).toBe(64 * 1024 * 1024);
    expect(loadConfig({ UPLOAD_MEMORY_USER_SHARE_PERCENT: '50' }).uploadMemoryUserMaxBytes).toBe(128 * 1024 * 1024);
    expect(loadConfig({ UPLOAD_MEMORY_MAX_BYTES: '300000', MAX_UPLOAD_BYTES: '100000' }).uploadMemoryUserMaxBytes).toBe(165_536);
    expect(loadConfig({ UPLOAD_MEMORY_MAX_BYTES: '300000', MAX_UPLOAD_BYTES: '100000', UPLOAD_MEMORY_USER_SHARE_PERCENT: '100' }).uploadMemoryUserMaxBytes).toBe(300_000);
    expect(() => loadConfig({ UPLOAD_MEMORY_USER_SHARE_PERCENT: '0' })).toThrow(/UPLOAD_MEMORY_USER_SHARE_PERCENT/);
    expect(() => loadConfig({ UPLOAD_MEMORY_USER_SHARE_PERCENT: '101' })).toThrow(/UPLOAD_MEMORY_USER_SHARE_PERCENT/);
  });

  it('reads the cap on one user\'s API keys', () => {
    expect(loadConfig({}).apiKeysPerUserMax).toBe(100);
    expect(loadConfig({ API_KEYS_PER_USER_MAX: '5' }).apiKeysPerUserMax).toBe(5);
    expect(() => loadConfig({ API_KEYS_PER_USER_MAX: '0' })).toThrow(/API_KEYS_PER_USER_MAX/);
  });

  it('reads the deepest a card may be', () => {
    expect(loadConfig({}).maxCardDepth).toBe(1000);
    expect(loadConfig({ MAX_CARD_DEPTH: '3' }).maxCardDepth).toBe(3);
    expect(() => loadConfig({ MAX_CARD_DEPTH: '0' })).toThrow(/MAX_CARD_DEPTH/);
  });

  it('reads a real server URL', () => {
    const c = loadConfig({ DATABASE_URL: 'postgres://u@localhost/db', PORT: '8080' });
    expect(c.embedded).toBe(false);
    expect(c.port).toBe(8080);
  });
});
