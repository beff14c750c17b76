export { WorkspaceModule } from './workspace.module.js';
export {
  WorkspaceApi,
  type AccessMode,
  type OrganizationAccess,
  type ProjectAccess,
  type Role,
  type NewProject,
  type ProjectView,
} from './contracts/workspace.api.js';
export { roleErrorResponses } from './http/role-error-responses.js';
export { ProjectDto } from './http/dto/workspace-responses.dto.js';
