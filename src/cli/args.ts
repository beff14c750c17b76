/** `--name value` and `--flag` options; positional words first. */
export interface ParsedArgs {
  words: string[];
  options: Record<string, string | true>;
}

export function parseArgs(argv: string[]): ParsedArgs {
  const words: string[] = [];
  const options: Record<string, string | true> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg.startsWith('--')) {
      const [name, inline] = arg.slice(2).split(/=(.*)/s, 2);
      if (inline !== undefined) options[name] = inline;
      else if (i + 1 < argv.length && !argv[i + 1].startsWith('--')) options[name] = argv[++i];
      else options[name] = true;
    } else if (arg === '-h') {
      options.help = true;
    } else {
      words.push(arg);
    }
  }
  return { words, options };
}

export class UsageError extends Error {}

export function requireOption(args: ParsedArgs, name: string): string {
  const value = args.options[name];
  if (typeof value !== 'string' || value === '') throw new UsageError(`missing --${name}`);
  return value;
}

export function optionalOption(args: ParsedArgs, name: string): string | undefined {
  const value = args.options[name];
  if (value === true) throw new UsageError(`--${name} needs a value`);
  return value;
}
