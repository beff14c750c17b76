import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { TypeOrmModule } from '@nestjs/typeorm';
import { createTestKernel, type TestKernel } from '../../../../test/support/test-kernel.js';
import { UserTakenError } from '../domain/identity.errors.js';
import { User } from '../domain/user.entity.js';
import { UsersRepository } from '../infrastructure/users.repository.js';
import { UsersService } from './users.service.js';

/**
 * Two sign-ups racing for one user name or email: both pass the check, and
 * the unique index refuses the second's row. The race cannot be made to
 * happen at will, so the check is made to miss the row already there (our own
 * repository's `exists`, mocked): what is left is the path the loser takes,
 * whose 409 must name the field the index guards, as the check's does.
 */
describe('a sign-up that lost the race for a user name or email', () => {
  let k: TestKernel;
  let users: UsersService;

  beforeAll(async () => {
    // forFeature registers the entity with the kernel's data source (autoLoadEntities), as IdentityModule does.
    k = await createTestKernel([...(TypeOrmModule.forFeature([User]).providers ?? []), UsersService, UsersRepository]);
    users = k.module.get(UsersService);
    await users.create({ username: 'first', email: 'first@example.test' });
    jest.spyOn(k.module.get(UsersRepository), 'exists').mockResolvedValue(null);
  });
  afterAll(() => k.close());

  const refusal = (username: string, email: string) => users.create({ username, email }).catch((e: unknown) => e);

  it('names the email when the email was taken (case aside)', async () => {
    const error = await refusal('second', 'First@Example.test');
    expect(error).toBeInstanceOf(UserTakenError);
    // Before, any unique violation said "username".
    expect(error).toMatchObject({ message: 'A user with this email already exists', errors: [{ field: 'email', message: 'already taken' }] });
  });

  it('names the user name when the user name was taken (case aside)', async () => {
    const error = await refusal('FIRST', 'second@example.test');
    expect(error).toBeInstanceOf(UserTakenError);
    expect(error).toMatchObject({ message: 'A user with this username already exists', errors: [{ field: 'username', message: 'already taken' }] });
  });
});
