import { describe, expect, it } from '@jest/globals';
import { parseArgs, requireOption, UsageError } from './args.js';

describe('parseArgs', () => {
  it('reads words, valued options and flags', () => {
    const a = parseArgs(['user', 'create', '--username', 'ann', '--email=a@x.io', '--admin']);
    expect(a.words).toEqual(['user', 'create']);
    expect(a.options).toEqual({ username: 'ann', email: 'a@x.io', admin: true });
  });
  it('names a missing option', () => {
    expect(() => requireOption(parseArgs(['user', 'create']), 'username')).toThrow(UsageError);
  });
});
