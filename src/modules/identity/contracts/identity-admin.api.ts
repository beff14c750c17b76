export interface NewUserInput {
  username: string;
  email: string;
  password?: string;
  displayName?: string;
  isAdmin?: boolean;
}

export interface CreatedUser {
  id: number;
  username: string;
  email: string;
}

export interface ApiKeySummary {
  id: number;
  name: string;
  prefix: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

/** Instance administration (the CLI): users and their API keys. */
export abstract class IdentityAdminApi {
  abstract createUser(input: NewUserInput): Promise<CreatedUser>;
  /** `user` is an id or `@username`. The key is returned once and never stored. */
  abstract createApiKey(user: string | number, name?: string): Promise<{ apiKey: string; key: ApiKeySummary }>;
  abstract listApiKeys(user: string | number): Promise<ApiKeySummary[]>;
  abstract revokeApiKey(user: string | number, keyId: number): Promise<ApiKeySummary>;
}
