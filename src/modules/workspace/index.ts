export { WorkspaceModule } from './workspace.module.js';
export {
  WorkspaceApi,
  type AccessMode,
  type OrganizationAccess,
  type ProjectAccess,
  type Role,
  type RootCardProvisioner,
  type RootCardRequest,
} from './contracts/workspace.api.js';
