import { Injectable } from '@nestjs/common';
import { UnitOfWork } from '../../../shared/persistence/unit-of-work.js';
import { mapViolations } from '../../../shared/persistence/sql-errors.js';
import { hashPassword, verifyPassword } from '../domain/secrets.js';
import { InvalidUserError, UserNotFoundError, UserTakenError } from '../domain/identity.errors.js';
import { User } from '../domain/user.entity.js';
import { COMMON_PASSWORDS } from '../domain/common-passwords.js';
import { DECEPTIVE_NAME_MESSAGE, hasDeceptiveCharacter } from '../domain/visible-name.js';
import { UsersRepository } from '../infrastructure/users.repository.js';

export interface NewUser {
  username: string;
  email: string;
  password?: string;
  displayName?: string;
  isAdmin?: boolean;
}

export interface UserView {
  id: number;
  username: string;
  email: string;
  display_name: string;
  is_admin: boolean;
  created_at: string;
}

/** Compared against when the login names nobody, so that answer takes as long as a wrong password. */
let dummyHash: Promise<string> | undefined;
const unknownUserHash = () => (dummyHash ??= hashPassword('not the password of anyone'));

const USERNAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
/** Sign-up's rule for a password's length: 8 to 1024 characters, counted as code points (an emoji is one, not two UTF-16 units). */
const passwordFits = (p: unknown): p is string => typeof p === 'string' && [...p].length >= 8 && [...p].length <= 1024;

/**
 * Why a password of a fitting length is one an attacker guesses first
 * (NIST SP 800-63B §5.1.1.2), or null: on the list of the most common ones,
 * one character repeated, or the account's own user name or email (case
 * aside, as guessers try both).
 */
function guessablePasswordProblem(password: string, account: { username?: string; email?: string } = {}): string | null {
  const lower = password.toLowerCase();
  if (COMMON_PASSWORDS.has(lower)) return 'is one of the most commonly used passwords; choose another';
  const chars = [...password];
  if (chars.every((c) => c === chars[0])) return 'is one character repeated; choose another';
  const own = [account.username, account.email, account.email?.split('@')[0]].filter((s): s is string => typeof s === 'string' && s.length > 0);
  if (own.some((s) => s.toLowerCase() === lower)) return 'must not be your user name or email address';
  return null;
}
/** identity.users' unique index on lower(email) (migration IdentityInit); the other is on lower(username). */
const EMAIL_INDEX = 'users_email_key';
const EMAIL = /^[^\s@]{1,200}@[^\s@]{1,200}\.[^\s@]{1,60}$/;

export function toUserView(u: User): UserView {
  return {
    id: Number(u.id),
    username: u.username,
    email: u.email,
    display_name: u.displayName,
    is_admin: u.isAdmin,
    created_at: u.createdAt.toISOString(),
  };
}

@Injectable()
export class UsersService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly users: UsersRepository,
  ) {}

  create(input: NewUser): Promise<User> {
    validate(input);
    return this.uow.run(async () => {
      const taken = await this.users.exists(input.username, input.email);
      if (taken) throw new UserTakenError(taken);
      const user = new User();
      user.username = input.username;
      user.email = input.email;
      user.displayName = input.displayName ?? input.username;
      user.passwordHash = input.password ? await hashPassword(input.password) : null;
      user.isAdmin = input.isAdmin ?? false;
      // Two sign-ups racing for one name or email: the unique index decides, and its name says which.
      return mapViolations(() => this.users.save(user), { unique: ({ constraint }) => new UserTakenError(constraint === EMAIL_INDEX ? 'email' : 'username') });
    });
  }

  /**
   * Web sign-up: a password is required, and the instance's first user becomes
   * its admin. The advisory lock makes "first" hold when two sign up at once.
   */
  signUp(input: { username: string; email: string; password: string }): Promise<User> {
    if (typeof input.password !== 'string' || input.password.length === 0) {
      throw new InvalidUserError('password is required', [{ field: 'password', message: 'is required' }]);
    }
    return this.uow.run(async () => {
      await this.uow.manager.query(`SELECT pg_advisory_xact_lock(hashtext('identity.sign-up'))`);
      const first = !(await this.users.any());
      return this.create({ username: input.username, email: input.email, password: input.password, isAdmin: first });
    });
  }

  /** The user whose username or email and password match. Unknown users cost a hash too, so timing tells nothing. */
  /** `user` (found by the login typed, or null) if `password` is its password; the same work for an unknown user. */
  async checkPassword(user: User | null, password: string): Promise<User | null> {
    const stored = user?.passwordHash ?? (await unknownUserHash());
    const ok = typeof password === 'string' && password.length <= 1024 && (await verifyPassword(password, stored));
    return ok && user?.passwordHash ? user : null;
  }

  /** Sign-up's rule for a password, for a new one chosen later (against the account's own names when given). */
  checkNewPassword(password: string, account?: { username: string; email: string }): void {
    if (!passwordFits(password)) {
      throw new InvalidUserError('The new password must be 8 to 1024 characters', [{ field: 'new_password', message: 'must be 8 to 1024 characters' }]);
    }
    const guessable = guessablePasswordProblem(password, account);
    if (guessable) throw new InvalidUserError(`The new password ${guessable}`, [{ field: 'new_password', message: guessable }]);
  }

  /**
   * Sets `user`'s password, if it is still the one just checked: of two
   * changes checked against the same password, the second finds it replaced
   * and changes nothing (false), as if its current password were wrong.
   * The caller has judged `password` already (`checkNewPassword`, before
   * the current password is checked).
   */
  async replacePassword(user: User, password: string): Promise<boolean> {
    return this.users.replacePasswordHash(user.id, user.passwordHash!, await hashPassword(password));
  }

  async get(id: number): Promise<User> {
    const user = await this.users.findById(id);
    if (!user) throw new UserNotFoundError();
    return user;
  }

  async getByUsername(username: string): Promise<User> {
    const user = await this.users.findByUsername(username.replace(/^@/, ''));
    if (!user) throw new UserNotFoundError();
    return user;
  }
}

function validate(input: NewUser): void {
  const problems: { field: string; message: string }[] = [];
  if (typeof input.username !== 'string' || !USERNAME.test(input.username)) {
    problems.push({ field: 'username', message: 'must be 1-64 letters, digits, dots, dashes or underscores' });
  }
  if (typeof input.email !== 'string' || !EMAIL.test(input.email)) {
    problems.push({ field: 'email', message: 'must be an email address' });
  }
  // The display name is shown on pages (the username's pattern already keeps it plain).
  if (input.displayName !== undefined && (typeof input.displayName !== 'string' || hasDeceptiveCharacter(input.displayName))) {
    problems.push({ field: 'display_name', message: DECEPTIVE_NAME_MESSAGE });
  }
  if (input.password !== undefined && !passwordFits(input.password)) {
    problems.push({ field: 'password', message: 'must be 8 to 1024 characters' });
  } else if (input.password !== undefined) {
    const guessable = guessablePasswordProblem(input.password, input);
    if (guessable) problems.push({ field: 'password', message: guessable });
  }
  if (problems.length) {
    throw new InvalidUserError(problems.map((p) => `${p.field} ${p.message}`).join('; '), problems);
  }
}
