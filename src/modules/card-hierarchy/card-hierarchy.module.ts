import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { WorkspaceModule } from '../workspace/index.js';
import { CardStreamEntry } from './activity/card-stream-entry.entity.js';
import { CardStreamRecorder } from './activity/card-stream.recorder.js';
import { CardStreamRepository } from './activity/card-stream.repository.js';
import { CardAccessService } from './application/card-access.service.js';
import { CardExtensions } from './application/card-extensions.js';
import { CardHierarchyApiImpl } from './application/card-hierarchy.api-impl.js';
import { CardStreamService } from './application/card-stream.service.js';
import { CardViewsService } from './application/card-views.service.js';
import { CardsService } from './application/cards.service.js';
import { ProjectCardsService } from './application/project-cards.service.js';
import { ProjectLifecycleHandler } from './application/project-lifecycle.handler.js';
import { RelocateCardService } from './application/relocate-card.service.js';
import { CardHierarchyApi } from './contracts/card-hierarchy.api.js';
import { Card } from './domain/card.entity.js';
import { CardsController } from './http/cards.controller.js';
import { ProjectCardsController } from './http/project-cards.controller.js';
import { CardTreeRepository } from './infrastructure/card-tree.repository.js';

@Module({
  imports: [TypeOrmModule.forFeature([Card, CardStreamEntry]), WorkspaceModule],
  controllers: [CardsController, ProjectCardsController],
  providers: [
    CardTreeRepository,
    CardStreamRepository,
    CardStreamRecorder,
    CardExtensions,
    CardAccessService,
    CardViewsService,
    CardsService,
    RelocateCardService,
    CardStreamService,
    ProjectCardsService,
    ProjectLifecycleHandler,
    { provide: CardHierarchyApi, useClass: CardHierarchyApiImpl },
  ],
  exports: [CardHierarchyApi],
})
export class CardHierarchyModule {}
