import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { loadConfig, type AppConfig } from '../config/app-config.js';
import { applyMigrations } from '../database/migrate.js';
import { claimEmbedded } from '../database/embedded-lock.js';
import { refuseNewerDatabase } from '../database/pending-migrations.js';
import { IdentityAdminApi } from '../modules/identity/index.js';
import { createCliLogger, PinoNestLogger } from '../observability/logging.js';
import { DomainError } from '../shared/domain/domain-error.js';
import { optionalOption, parseArgs, requireOption, UsageError, type CommandOptions, type ParsedArgs } from './args.js';
import { CliModule } from './cli.module.js';

const HELP = `Usage: cardwork <command> [options]

Commands:
  user create --username U --email E [--password P] [--admin[=true|false]]
        Create a user and a first API key. Prints one JSON line:
        {"id":…,"username":…,"email":…,"api_key":"cwk_…"}
  apikey create --user <id|@username> [--name N]   Create another API key (shown once)
  apikey list --user <id|@username>                 List a user's keys (never the keys themselves)
  apikey revoke --user <id|@username> --id KEY_ID   Revoke a key
  migrate                                           Apply pending database migrations. Prints one JSON line:
        {"applied":N,"migrations":["…names, in the order applied…"]}
  --help                                            Show this help

An option a command does not take, or a word after it, is refused (exit 2).
Configuration comes from the environment (DATABASE_URL, DATA_DIR, …; see README.md).
Without DATABASE_URL the embedded database in DATA_DIR is used; it refuses while a
server holds that directory.`;

/** What each command takes; anything else on its line is a usage error. */
const COMMANDS: Record<string, CommandOptions> = {
  'user create': { values: ['username', 'email', 'password'], flags: ['admin'] },
  'apikey create': { values: ['user', 'name'] },
  'apikey list': { values: ['user'] },
  'apikey revoke': { values: ['user', 'id'] },
  migrate: {},
};

/** `refuseNewerDatabase`, its warning (migrations this build does not have, dated earlier) on stderr. `applying`: the command applies pending migrations whatever MIGRATIONS_RUN says. */
async function refuseNewerDatabaseWarning(config: AppConfig, applying = config.migrationsRun): Promise<void> {
  const warning = await refuseNewerDatabase(config, applying);
  if (warning) process.stderr.write(`cardwork: warning: ${warning}\n`);
}

function print(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

/** Every command that opens the database refuses first one a newer cardwork migrated, writing nothing (README, "Upgrading"). */
async function withIdentity<T>(config: AppConfig, work: (api: IdentityAdminApi) => Promise<T>): Promise<T> {
  await refuseNewerDatabaseWarning(config);
  const app = await NestFactory.createApplicationContext(CliModule.forRoot(config), { logger: false });
  try {
    return await work(app.get(IdentityAdminApi));
  } finally {
    await app.close();
  }
}

function userRef(args: ParsedArgs): string {
  return requireOption(args, 'user');
}

async function run(args: ParsedArgs, config: AppConfig): Promise<void> {
  switch (args.command) {
    // Options are read before the database is opened: a usage error answers at once and changes nothing.
    case 'user create': {
      const input = {
        username: requireOption(args, 'username'),
        email: requireOption(args, 'email'),
        password: optionalOption(args, 'password'),
        isAdmin: args.flags.admin ?? false,
      };
      return withIdentity(config, async (api) => {
        const user = await api.createUser(input);
        const { apiKey } = await api.createApiKey(user.id, 'cli');
        print({ id: user.id, username: user.username, email: user.email, api_key: apiKey });
      });
    }
    case 'apikey create': {
      const [user, name] = [userRef(args), optionalOption(args, 'name') ?? ''];
      return withIdentity(config, async (api) => {
        const { apiKey, key } = await api.createApiKey(user, name);
        print({ ...key, api_key: apiKey });
      });
    }
    case 'apikey list': {
      const user = userRef(args);
      return withIdentity(config, async (api) => print(await api.listApiKeys(user)));
    }
    case 'apikey revoke': {
      const [user, id] = [userRef(args), requireOption(args, 'id')];
      if (!/^\d+$/.test(id)) throw new UsageError('--id must be a key id');
      return withIdentity(config, async (api) => print(await api.revokeApiKey(user, Number(id))));
    }
    case 'migrate':
      return migrate(config);
    default:
      throw new UsageError(`unknown command "${args.command}"`);
  }
}

async function migrate(config: AppConfig): Promise<void> {
  await refuseNewerDatabaseWarning(config, true);
  // The CLI says at once when the database is away; the server's start waits for it.
  const migrations = await applyMigrations(config, undefined, true);
  print({ applied: migrations.length, migrations });
}

async function main(): Promise<number> {
  let release = () => undefined as void;
  try {
    // The command line is read before the configuration and the database: a usage error changes nothing.
    const args = parseArgs(process.argv.slice(2), COMMANDS);
    if (args.command === 'help') {
      process.stdout.write(`${HELP}\n`);
      return 0;
    }
    const config = loadConfig();
    // What logs outside a Nest context (the migrations' progress) follows LOG_LEVEL, on stderr.
    Logger.overrideLogger(new PinoNestLogger(createCliLogger(config.logLevel)));
    if (config.embedded) release = claimEmbedded(config.dataDir);
    await run(args, config);
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`cardwork: ${error.message}\n\n${HELP}\n`);
      return 2;
    }
    const message = error instanceof DomainError || error instanceof Error ? error.message : String(error);
    process.stderr.write(`cardwork: ${message}\n`);
    return 1;
  } finally {
    release();
  }
}

process.exitCode = await main();
