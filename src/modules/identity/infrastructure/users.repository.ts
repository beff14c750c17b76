import { Injectable } from '@nestjs/common';
import { returnedRows } from '../../../shared/persistence/sql.js';
import { UnitOfWork } from '../../../shared/persistence/unit-of-work.js';
import { User } from '../domain/user.entity.js';

@Injectable()
export class UsersRepository {
  constructor(private readonly uow: UnitOfWork) {}

  private get repo() {
    return this.uow.manager.getRepository(User);
  }

  findById(id: number): Promise<User | null> {
    return this.repo.findOneBy({ id });
  }

  findByIds(ids: number[]): Promise<User[]> {
    // One array parameter, however many ids (`In()` binds each on its own).
    return ids.length ? this.repo.createQueryBuilder('u').where('u.id = ANY(:ids)', { ids }).getMany() : Promise.resolve([]);
  }

  findByUsername(username: string): Promise<User | null> {
    return this.repo.createQueryBuilder('u').where('lower(u.username) = lower(:username)', { username }).getOne();
  }

  findByNames(usernames: string[], names: string[]): Promise<User[]> {
    const lower = (list: string[]) => list.map((n) => n.toLowerCase());
    return this.repo
      .createQueryBuilder('u')
      .where('lower(u.username) = ANY(:usernames) OR lower(u.username) = ANY(:names) OR lower(u.display_name) = ANY(:names)', {
        usernames: lower(usernames),
        names: lower(names),
      })
      .getMany();
  }

  /** By username or email, case-insensitively (the login form accepts either). */
  findByLogin(login: string): Promise<User | null> {
    return this.repo
      .createQueryBuilder('u')
      .where('lower(u.username) = lower(:login) OR lower(u.email) = lower(:login)', { login })
      .getOne();
  }

  async any(): Promise<boolean> {
    return (await this.uow.manager.query(`SELECT 1 FROM identity.users LIMIT 1`)).length > 0;
  }

  async exists(username: string, email: string): Promise<'username' | 'email' | null> {
    const row = await this.repo
      .createQueryBuilder('u')
      .where('lower(u.username) = lower(:username) OR lower(u.email) = lower(:email)', { username, email })
      .getOne();
    if (!row) return null;
    return row.username.toLowerCase() === username.toLowerCase() ? 'username' : 'email';
  }

  /** Sets the password hash if it is still `expected`; false when it was not. */
  async replacePasswordHash(id: number, expected: string, next: string): Promise<boolean> {
    const result: unknown = await this.uow.manager.query(
      `UPDATE identity.users SET password_hash = $3 WHERE id = $1 AND password_hash = $2 RETURNING id`,
      [id, expected, next],
    );
    return returnedRows(result).length === 1;
  }

  save(user: User): Promise<User> {
    return this.repo.save(user);
  }
}
