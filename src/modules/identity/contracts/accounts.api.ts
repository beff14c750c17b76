/** A user as the web pages show their own account. */
export interface Account {
  id: number;
  username: string;
  email: string;
  displayName: string;
  isAdmin: boolean;
}

export interface SignUpInput {
  username: string;
  email: string;
  password: string;
}

/** Self-service accounts for the web pages: sign-up and password login. */
export abstract class AccountsApi {
  /** Creates a user with a password; the instance's first user becomes its admin (DESIGN.md §1). */
  abstract signUp(input: SignUpInput): Promise<Account>;
  /**
   * The account whose username or email and password match; null otherwise
   * (same answer for both). Attempts are limited per client address and per
   * account (by user name and by email alike; an unknown login per its text):
   * over the limit it throws a `rate_limited` DomainError.
   */
  abstract logIn(login: string, password: string, address: string): Promise<Account | null>;
  abstract getAccount(userId: number): Promise<Account | null>;
  /**
   * Replaces the user's password when `currentPassword` is theirs; false
   * (nothing changed) when it is not. The new one follows sign-up's rules
   * (an `invalid` DomainError otherwise, checked first and not counted).
   * Each check of the current password counts as a login attempt, under
   * the same limits as `logIn` (its address and the account): a stolen
   * session cannot guess it faster than the login page allows.
   * `alongWithChange` runs in the transaction that replaces the password,
   * only when it does (the web module ends the user's sessions there: never
   * a new password with the old one's sessions still open).
   */
  abstract changePassword(
    userId: number,
    currentPassword: string,
    newPassword: string,
    address: string,
    alongWithChange?: () => Promise<void>,
  ): Promise<boolean>;
}
