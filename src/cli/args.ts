/** The options a command takes: `--name value` (or `--name=value`) and flags. */
export interface CommandOptions {
  values?: readonly string[];
  flags?: readonly string[];
}

/** A command line read against the command it names: anything that command does not take is a usage error. */
export interface ParsedArgs {
  /** The command's words (`user create`), or `help`. */
  command: string;
  options: Record<string, string>;
  flags: Record<string, boolean>;
}

export class UsageError extends Error {}

/** How a flag's value may be written, when one is given (`--admin=false`). */
const FLAG_VALUES: Record<string, boolean> = { true: true, yes: true, '1': true, false: false, no: false, '0': false };

/**
 * Reads `argv` against `commands` (keyed by their words, `user create`).
 * Before, every `--name` was accepted whatever the command, and a flag took
 * the next word as its value: `--admin true` made no admin, a mistyped
 * `--passwd` created a user without a password, and stray words were
 * ignored. Now an option the command does not take, a word after the
 * command's, an option given twice or a flag value that is not one of
 * true/false/yes/no/1/0 is a usage error.
 */
export function parseArgs(argv: string[], commands: Record<string, CommandOptions>): ParsedArgs {
  if (argv.includes('--help') || argv.includes('-h') || argv[0] === 'help') return { command: 'help', options: {}, flags: {} };
  const command = commandOf(argv, commands);
  const spec = commands[command];
  const parsed: ParsedArgs = { command, options: {}, flags: {} };
  const rest = argv.slice(command.split(' ').length);
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i];
    if (!arg.startsWith('--') || arg === '--') throw new UsageError(`unexpected "${arg}" after "${command}"`);
    const [name, inline] = arg.slice(2).split(/=(.*)/s, 2);
    if (name in parsed.options || name in parsed.flags) throw new UsageError(`--${name} is given twice`);
    if (spec.flags?.includes(name)) {
      // A following word that reads as a boolean is the flag's value (`--admin true`); any other is a stray word.
      const given = inline ?? (rest[i + 1] !== undefined && rest[i + 1].toLowerCase() in FLAG_VALUES ? rest[++i] : undefined);
      parsed.flags[name] = flagValue(name, given);
    } else if (spec.values?.includes(name)) {
      const value = inline ?? (rest[i + 1] !== undefined && !rest[i + 1].startsWith('--') ? rest[++i] : undefined);
      if (value === undefined) throw new UsageError(`--${name} needs a value`);
      parsed.options[name] = value;
    } else {
      throw new UsageError(`"${command}" takes no option --${name}`);
    }
  }
  return parsed;
}

/** The longest run of leading words that names a command. */
function commandOf(argv: string[], commands: Record<string, CommandOptions>): string {
  const firstOption = argv.findIndex((arg) => arg.startsWith('-'));
  const words = argv.slice(0, Math.min(2, firstOption < 0 ? argv.length : firstOption));
  for (let n = words.length; n > 0; n--) {
    const command = words.slice(0, n).join(' ');
    if (Object.hasOwn(commands, command)) return command;
  }
  throw new UsageError(words.length ? `unknown command "${words.join(' ')}"` : 'no command given');
}

function flagValue(name: string, given: string | undefined): boolean {
  if (given === undefined) return true;
  const value = FLAG_VALUES[given.toLowerCase()];
  if (value === undefined) throw new UsageError(`--${name} takes no value, or one of true, false, yes, no, 1, 0 (got "${given}")`);
  return value;
}

export function requireOption(args: ParsedArgs, name: string): string {
  const value = args.options[name];
  if (value === undefined || value === '') throw new UsageError(`missing --${name}`);
  return value;
}

export function optionalOption(args: ParsedArgs, name: string): string | undefined {
  return args.options[name];
}
