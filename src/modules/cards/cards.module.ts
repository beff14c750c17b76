import { Module } from '@nestjs/common';
import { CardHierarchyModule } from '../card-hierarchy/index.js';
import { FieldsModule } from '../fields/index.js';
import { GroupingModule } from '../grouping/index.js';
import { WorkspaceModule } from '../workspace/index.js';
import { CardSearchService } from './application/card-search.service.js';
import { CardViewsService } from './application/card-views.service.js';
import { CardsApiImpl } from './application/cards.api-impl.js';
import { CreateCardsService } from './application/create-cards.service.js';
import { CreateProjectService } from './application/create-project.service.js';
import { DeleteCardService } from './application/delete-card.service.js';
import { DeleteProjectService } from './application/delete-project.service.js';
import { GroupTypesWithFieldService } from './application/group-types-with-field.service.js';
import { RelocateCardService } from './application/relocate-card.service.js';
import { SetCardValuesService } from './application/set-card-values.service.js';
import { CardsApi } from './contracts/cards.api.js';
import { CardAttributesController } from './http/card-attributes.controller.js';
import { CardMembershipsController } from './http/card-memberships.controller.js';
import { CardsController } from './http/cards.controller.js';
import { GroupTypesController } from './http/group-types.controller.js';
import { ProjectCardsController, ProjectCreationController, ProjectsController } from './http/project-cards.controller.js';
import { SearchController } from './http/search.controller.js';
import { ValueUpload } from './http/value-upload.js';
import { CardFilterModule } from './filter/card-filter.module.js';

/**
 * The composition layer (STYLE.md §2.4): the card as the API shows it, and
 * every use case that spans card-hierarchy, fields and grouping, in the one
 * lock order (docs/ARCHITECTURE.md, "The one lock order").
 */
@Module({
  imports: [WorkspaceModule, CardHierarchyModule, FieldsModule, GroupingModule, CardFilterModule],
  controllers: [
    CardsController,
    ProjectCardsController,
    ProjectCreationController,
    ProjectsController,
    CardAttributesController,
    CardMembershipsController,
    GroupTypesController,
    SearchController,
  ],
  providers: [
    CardViewsService,
    CardSearchService,
    CreateCardsService,
    RelocateCardService,
    SetCardValuesService,
    DeleteCardService,
    DeleteProjectService,
    GroupTypesWithFieldService,
    CreateProjectService,
    ValueUpload,
    { provide: CardsApi, useClass: CardsApiImpl },
  ],
  exports: [CardsApi],
})
export class CardsModule {}
