import { CardFilterApi } from './contracts/card-filter.api.js';
import { CardFilterSql } from './infrastructure/card-filter.sql.js';
import { Module } from '@nestjs/common';
import { WorkspaceModule } from '../workspace/index.js';
import { CardStreamRecorder } from './activity/card-stream.recorder.js';
import { CardStreamRepository } from './activity/card-stream.repository.js';
import { CardAccessService } from './application/card-access.service.js';
import { CardHierarchyApiImpl } from './application/card-hierarchy.api-impl.js';
import { CardStreamService } from './application/card-stream.service.js';
import { CardTreeService } from './application/card-tree.service.js';
import { MoveCardService } from './application/move-card.service.js';
import { ProjectCardsService } from './application/project-cards.service.js';
import { TreeLocksService } from './application/tree-locks.service.js';
import { CardTreeProjectDeletedHandler } from './application/project-deleted.handler.js';
import { ProjectCardLocksService } from './application/project-card-locks.service.js';
import { CardHierarchyApi } from './contracts/card-hierarchy.api.js';
import { ProjectCardLocks } from './contracts/project-card-locks.api.js';
import { CardStreamController } from './http/card-stream.controller.js';
import { CardListingQueries } from './infrastructure/card-listing.queries.js';
import { CardTreeRepository } from './infrastructure/card-tree.repository.js';
import { TreeLockQueries } from './infrastructure/tree-locks.queries.js';
import { ProjectCardLockQueries } from './infrastructure/project-card-locks.queries.js';

@Module({
  imports: [WorkspaceModule],
  controllers: [CardStreamController],
  providers: [
    CardTreeRepository,
    TreeLockQueries,
    ProjectCardLockQueries,
    CardListingQueries,
    CardStreamRepository,
    CardStreamRecorder,
    CardAccessService,
    TreeLocksService,
    CardTreeService,
    MoveCardService,
    CardStreamService,
    ProjectCardsService,
    CardTreeProjectDeletedHandler,
    { provide: CardHierarchyApi, useClass: CardHierarchyApiImpl },
    { provide: CardFilterApi, useClass: CardFilterSql },
    { provide: ProjectCardLocks, useClass: ProjectCardLocksService },
  ],
  exports: [CardHierarchyApi, CardFilterApi, ProjectCardLocks],
})
export class CardHierarchyModule {}
