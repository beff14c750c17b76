import { GroupFilterApi } from './contracts/group-filter.api.js';
import { GroupFilterSql } from './infrastructure/group-filter.sql.js';
import { Module } from '@nestjs/common';
import { CardHierarchyModule } from '../card-hierarchy/index.js';
import { WorkspaceModule } from '../workspace/index.js';
import { CardGroupsReader } from './application/card-groups.reader.js';
import { GroupTypesService } from './application/group-types.service.js';
import { GroupingAccess } from './application/grouping-access.service.js';
import { GroupingApiImpl } from './application/grouping.api-impl.js';
import { GroupsService } from './application/groups.service.js';
import { MembershipsService } from './application/memberships.service.js';
import { GroupingProjectDeletedHandler } from './application/project-deleted.handler.js';
import { GroupingApi } from './contracts/grouping.api.js';
import { GroupsController } from './http/groups.controller.js';
import { CardLocks } from './infrastructure/card-locks.js';
import { GroupTypesRepository } from './infrastructure/group-types.repository.js';
import { GroupsRepository } from './infrastructure/groups.repository.js';
import { MembershipsRepository } from './infrastructure/memberships.repository.js';

@Module({
  imports: [WorkspaceModule, CardHierarchyModule],
  controllers: [GroupsController],
  providers: [
    GroupTypesRepository,
    GroupsRepository,
    MembershipsRepository,
    CardLocks,
    GroupingAccess,
    MembershipsService,
    GroupsService,
    GroupTypesService,
    CardGroupsReader,
    GroupingProjectDeletedHandler,
    { provide: GroupingApi, useClass: GroupingApiImpl },
    { provide: GroupFilterApi, useClass: GroupFilterSql },
  ],
  exports: [GroupingApi, GroupFilterApi],
})
export class GroupingModule {}
