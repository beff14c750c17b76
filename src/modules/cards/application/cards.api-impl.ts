import { Injectable } from '@nestjs/common';
import type { Actor } from '../../../shared/domain/actor.js';
import { CardHierarchyApi } from '../../card-hierarchy/index.js';
import type { ProjectFields } from '../../fields/index.js';
import type { ProjectView } from '../../workspace/index.js';
import { CardsApi, type BatchSequence, type CardView, type CreateCardInput, type CreatedCard, type GroupTypeWithField, type NewCard, type PreparedCards, type PreparedCardsOptions } from '../contracts/cards.api.js';
import { CardViewsService } from './card-views.service.js';
import { CreateCardsService } from './create-cards.service.js';
import { CreateProjectService } from './create-project.service.js';
import { GroupTypesWithFieldService } from './group-types-with-field.service.js';

@Injectable()
export class CardsApiImpl extends CardsApi {
  constructor(
    private readonly hierarchy: CardHierarchyApi,
    private readonly cardViews: CardViewsService,
    private readonly creation: CreateCardsService,
    private readonly groupTypes: GroupTypesWithFieldService,
    private readonly projects: CreateProjectService,
  ) {
    super();
  }

  async view(cardId: number, actor: Actor): Promise<CardView> {
    await this.hierarchy.requireCard(cardId, actor, 'read');
    return this.cardViews.one(cardId);
  }

  views(cardIds: number[]): Promise<CardView[]> {
    return this.cardViews.byIds(cardIds);
  }

  create(parentId: number, input: CreateCardInput, actor: Actor): Promise<CardView> {
    return this.creation.create(parentId, input, actor);
  }

  createMany(parentId: number, cards: NewCard[], actor: Actor, options?: { system?: boolean }): Promise<CreatedCard[]> {
    return this.creation.createMany(parentId, cards, actor, options);
  }

  prepareMany(projectId: number, cards: NewCard[], projectFields: ProjectFields): Promise<PreparedCards> {
    return this.creation.prepareMany(projectId, cards, projectFields);
  }

  createPrepared(parentId: number, batch: PreparedCards, actor: Actor, options?: PreparedCardsOptions): Promise<CreatedCard[]> {
    return this.creation.createPrepared(parentId, batch, actor, options);
  }

  openBatches(parentId: number, actor: Actor, options?: PreparedCardsOptions): Promise<BatchSequence> {
    return this.creation.openBatches(parentId, actor, options);
  }

  ensureGroupType(projectId: number, name: string, oneGroupPerCard: boolean, actor: Actor): Promise<GroupTypeWithField> {
    return this.groupTypes.ensure(projectId, name, oneGroupPerCard, actor);
  }

  createProject(organizationId: number, title: string, actor: Actor): Promise<ProjectView> {
    return this.projects.create(organizationId, title, actor);
  }
}
