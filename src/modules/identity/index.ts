export { IdentityModule, IdentityAdminModule } from './identity.module.js';
export { IdentityApi, type UserSummary } from './contracts/identity.api.js';
export {
  IdentityAdminApi,
  type ApiKeySummary,
  type CreatedUser,
  type NewUserInput,
} from './contracts/identity-admin.api.js';
