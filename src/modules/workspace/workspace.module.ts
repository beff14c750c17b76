import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { IdentityModule } from '../identity/index.js';
import { OrganizationsService } from './application/organizations.service.js';
import { ProjectsService } from './application/projects.service.js';
import { WorkspaceAccess } from './application/workspace-access.service.js';
import { WorkspaceApiImpl } from './application/workspace.api-impl.js';
import { WorkspaceApi } from './contracts/workspace.api.js';
import { Membership } from './domain/membership.entity.js';
import { Organization } from './domain/organization.entity.js';
import { Project } from './domain/project.entity.js';
import { OrganizationsController } from './http/organizations.controller.js';
import { ProjectsController } from './http/projects.controller.js';
import { WorkspaceRepository } from './infrastructure/workspace.repository.js';

@Module({
  imports: [TypeOrmModule.forFeature([Organization, Membership, Project]), IdentityModule],
  controllers: [OrganizationsController, ProjectsController],
  providers: [
    WorkspaceRepository,
    WorkspaceAccess,
    OrganizationsService,
    ProjectsService,
    { provide: WorkspaceApi, useClass: WorkspaceApiImpl },
  ],
  exports: [WorkspaceApi],
})
export class WorkspaceModule {}
