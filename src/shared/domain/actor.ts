/** OAuth scopes (DESIGN.md §3). API keys carry no scopes: full access of the user. */
export type Scope = 'read_user' | 'read_workspace' | 'write_workspace';

/** Who is acting: passed from the HTTP edge into every use case. */
export interface Actor {
  userId: number;
  username: string;
  isAdmin: boolean;
  /** null = API key (no scope restriction). */
  scopes: Scope[] | null;
}
