import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { CardHierarchyModule } from '../card-hierarchy/index.js';
import { FieldsModule } from '../fields/index.js';
import { WorkspaceModule } from '../workspace/index.js';
import { CardDeletionHandler } from './application/card-deletion.handler.js';
import { CardIntegration } from './application/card-integration.js';
import { GroupTypesService } from './application/group-types.service.js';
import { GroupingAccess } from './application/grouping-access.service.js';
import { GroupingApiImpl } from './application/grouping.api-impl.js';
import { GroupsService } from './application/groups.service.js';
import { MembershipsService } from './application/memberships.service.js';
import { ProjectLifecycleHandler } from './application/project-lifecycle.handler.js';
import { GroupingApi } from './contracts/grouping.api.js';
import { Group } from './domain/group.entity.js';
import { GroupType } from './domain/group-type.entity.js';
import { CardMembership } from './domain/card-membership.entity.js';
import { CardMembershipsController } from './http/card-memberships.controller.js';
import { GroupTypesController } from './http/group-types.controller.js';
import { GroupsController } from './http/groups.controller.js';
import { CardLocks } from './infrastructure/card-locks.js';
import { GroupTypesRepository } from './infrastructure/group-types.repository.js';
import { GroupsRepository } from './infrastructure/groups.repository.js';
import { MembershipsRepository } from './infrastructure/memberships.repository.js';

@Module({
  imports: [TypeOrmModule.forFeature([GroupType, Group, CardMembership]), WorkspaceModule, CardHierarchyModule, FieldsModule],
  controllers: [GroupTypesController, GroupsController, CardMembershipsController],
  providers: [
    GroupTypesRepository,
    GroupsRepository,
    MembershipsRepository,
    CardLocks,
    GroupingAccess,
    MembershipsService,
    GroupsService,
    GroupTypesService,
    CardIntegration,
    ProjectLifecycleHandler,
    CardDeletionHandler,
    { provide: GroupingApi, useClass: GroupingApiImpl },
  ],
  exports: [GroupingApi],
})
export class GroupingModule {}
