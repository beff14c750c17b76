/** A user as other modules see one. */
export interface UserSummary {
  id: number;
  username: string;
  displayName: string;
}

/** Public API of the identity module. */
export abstract class IdentityApi {
  /** The users among `ids` that exist, in no particular order. */
  abstract findUsers(ids: number[]): Promise<UserSummary[]>;
  /** A user by id or by `@username`; null when there is none. */
  abstract resolveUser(ref: number | string): Promise<UserSummary | null>;
  /**
   * Users named in a filter, ignoring case: those whose username is one of
   * `usernames`, and those whose username or display name is one of `names`.
   */
  abstract usersNamed(usernames: string[], names: string[]): Promise<UserSummary[]>;
}
