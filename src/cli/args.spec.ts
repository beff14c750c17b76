import { describe, expect, it } from '@jest/globals';
import { parseArgs, requireOption, UsageError } from './args.js';

const COMMANDS = {
  'user create': { values: ['username', 'email', 'password'], flags: ['admin'] },
  'apikey create': { values: ['user', 'name'] },
  migrate: {},
};
const parse = (...argv: string[]) => parseArgs(argv, COMMANDS);
const refusal = (...argv: string[]) => {
  try {
    parse(...argv);
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
  throw new Error(`${argv.join(' ')} was accepted`);
};

describe('parseArgs', () => {
  it('reads the command, valued options and flags', () => {
    expect(parse('user', 'create', '--username', 'ann', '--email=a@x.io', '--admin')).toEqual({
      command: 'user create',
      options: { username: 'ann', email: 'a@x.io' },
      flags: { admin: true },
    });
    expect(parse('migrate')).toEqual({ command: 'migrate', options: {}, flags: {} });
  });

  it('reads a flag’s value when it is one of true/false/yes/no/1/0, written after = or as the next word', () => {
    for (const [given, value] of [['true', true], ['YES', true], ['1', true], ['false', false], ['no', false], ['0', false]] as const) {
      expect(parse('user', 'create', `--admin=${given}`).flags.admin).toBe(value);
      expect(parse('user', 'create', '--admin', given, '--username', 'u').flags.admin).toBe(value);
    }
  });

  it('refuses a flag value it cannot read', () => {
    expect(refusal('user', 'create', '--admin=maybe')).toMatch(/--admin takes no value, or one of true, false, yes, no, 1, 0 \(got "maybe"\)/);
    expect(refusal('user', 'create', '--admin', 'maybe')).toMatch(/unexpected "maybe"/);
  });

  it('refuses an option the command does not take, a stray word, an option given twice', () => {
    expect(refusal('user', 'create', '--username', 'dave', '--passwd', 'Secret-pass1')).toMatch(/"user create" takes no option --passwd/);
    expect(refusal('apikey', 'create', '--user', '@alice', 'extra', 'words')).toMatch(/unexpected "extra" after "apikey create"/);
    expect(refusal('migrate', 'now')).toMatch(/unexpected "now"/);
    expect(refusal('migrate', '--admin')).toMatch(/"migrate" takes no option --admin/);
    expect(refusal('user', 'create', '--username', 'a', '--username=b')).toMatch(/--username is given twice/);
    expect(refusal('user', 'create', '-u', 'a')).toMatch(/unexpected "-u"/);
    expect(refusal('user', 'create', '--username', '--email', 'e')).toMatch(/--username needs a value/);
  });

  it('names an unknown or missing command, and answers help wherever it is asked', () => {
    expect(refusal('frobnicate')).toBe('unknown command "frobnicate"');
    expect(refusal('user', 'delete', '--username', 'x')).toBe('unknown command "user delete"');
    expect(refusal()).toBe('no command given');
    expect(refusal('--username', 'x')).toBe('no command given');
    expect(parse('user', 'create', '--help').command).toBe('help');
    expect(parse('help').command).toBe('help');
  });

  it('names a missing option', () => {
    expect(() => requireOption(parse('user', 'create'), 'username')).toThrow(UsageError);
  });
});
