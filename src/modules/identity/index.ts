export { IdentityModule, IdentityAdminModule } from './identity.module.js';
export { earlyKeyLookup } from './auth/early-key-lookup.js';
export { guardErrorResponses } from './auth/guard-error-responses.js';
export { idempotencyKeyResponses } from './http/idempotency-key.openapi.js';
export { IdentityApi } from './contracts/identity.api.js';
export {
  IdentityAdminApi,
  type ApiKeySummary,
  type CreatedUser,
  type NewUserInput,
} from './contracts/identity-admin.api.js';
export { AccountsApi, type Account } from './contracts/accounts.api.js';
export {
  OAuthApi,
  type AuthorizationOutcome,
  type AuthorizeParams,
  type AuthorizedApp,
  type NewOAuthClient,
  type OAuthClientSummary,
  type OAuthEndpointAnswer,
  type OAuthEndpointRequest,
} from './contracts/oauth.api.js';
