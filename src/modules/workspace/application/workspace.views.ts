import type { ProjectView, Role } from '../contracts/workspace.api.js';
import type { Organization } from '../domain/organization.entity.js';
import type { Project } from '../domain/project.entity.js';

export interface OrganizationView {
  id: number;
  name: string;
  role: Role;
  created_at: string;
}

export interface MemberView {
  user_id: number;
  username: string;
  role: Role;
}

export const toOrganizationView = (o: Organization, role: Role): OrganizationView => ({
  id: Number(o.id),
  name: o.name,
  role,
  created_at: o.createdAt.toISOString(),
});

export const toProjectView = (p: Project): ProjectView => ({
  id: Number(p.id),
  organization_id: Number(p.organizationId),
  title: p.title,
  top_level_card_id: Number(p.topLevelCardId),
  created_at: p.createdAt.toISOString(),
});
