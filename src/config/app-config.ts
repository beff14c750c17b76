import path from 'node:path';

/** Thrown at start when an environment variable holds a value we cannot use. */
export class ConfigError extends Error {
  constructor(variable: string, problem: string) {
    super(`Invalid configuration: ${variable} ${problem}`);
  }
}

/** Typed configuration, read once from the environment (DESIGN.md §1). */
export class AppConfig {
  readonly port: number;
  readonly host: string;
  readonly databaseUrl: string | undefined;
  readonly dataDir: string;
  readonly baseUrl: string;
  readonly authUrl: string;
  readonly maxUploadBytes: number;
  readonly allowSignup: boolean;
  readonly fileUrlAllowPrivate: boolean;
  readonly migrationsRun: boolean;
  /** Requests per minute allowed for one credential. */
  readonly rateLimitPerMinute: number;

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

function readUrl(env: Env, name: string, fallback: string | undefined, protocols: string[]): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(name, `must be a URL, got "${raw}"`);
  }
  if (!protocols.includes(url.protocol)) {
    throw new ConfigError(name, `must use ${protocols.join(' or ')}, got "${url.protocol}"`);
  }
  return raw.replace(/\/+$/, '');
}

export function loadConfig(env: Env = process.env): AppConfig {
  const host = env.HOST?.trim() || '127.0.0.1';
  if (/\s/.test(host)) throw new ConfigError('HOST', `must be a host name or address, got "${host}"`);
  return new AppConfig({
    port: readInt(env, 'PORT', 3000, 0, 65535),
    host,
    databaseUrl: readUrl(env, 'DATABASE_URL', undefined, ['postgres:', 'postgresql:']),
    dataDir: path.resolve(env.DATA_DIR?.trim() || './data'),
    baseUrl: readUrl(env, 'BASE_URL', 'http://localhost:3000/api/1.0', ['http:', 'https:'])!,
    authUrl: readUrl(env, 'AUTH_URL', 'http://localhost:3000', ['http:', 'https:'])!,
    maxUploadBytes: readInt(env, 'MAX_UPLOAD_BYTES', 20 * 1024 * 1024, 1, 2 ** 40),
    allowSignup: readBool(env, 'ALLOW_SIGNUP', true),
    fileUrlAllowPrivate: readBool(env, 'FILE_URL_ALLOW_PRIVATE', false),
    migrationsRun: readBool(env, 'MIGRATIONS_RUN', true),
    rateLimitPerMinute: readInt(env, 'RATE_LIMIT_PER_MINUTE', 6000, 1, 10_000_000),
  } as AppConfig);
}
