import { Injectable, type OnModuleInit } from '@nestjs/common';
import { CardHierarchyApi, type CardSummary } from '../../card-hierarchy/index.js';
import { FieldsApi } from '../../fields/index.js';
import { GroupTypesRepository } from '../infrastructure/group-types.repository.js';
import { GroupsRepository } from '../infrastructure/groups.repository.js';
import { MembershipsRepository } from '../infrastructure/memberships.repository.js';
import type { CardGroupView } from './grouping.views.js';
import { MembershipsService } from './memberships.service.js';

/**
 * How grouping takes part in cards and fields without them depending on it:
 * the card JSON's `groups`, `group_id` on creation and relocation, leaving
 * the groups a moved card is no longer under, and the values and choices of
 * the group_type fields.
 */
@Injectable()
export class CardIntegration implements OnModuleInit {
  constructor(
    private readonly hierarchy: CardHierarchyApi,
    private readonly fields: FieldsApi,
    private readonly memberships: MembershipsRepository,
    private readonly membershipsService: MembershipsService,
    private readonly groups: GroupsRepository,
    private readonly types: GroupTypesRepository,
  ) {}

  onModuleInit(): void {
    this.hierarchy.registerExtension({
      key: 'groups',
      view: (cards) => this.view(cards),
      // Memberships of a new card come only from `group_id` on creation.
      emptyOnNewCard: true,
      creationKeys: ['group_id'],
      onCreate: (card, input, actor) => this.membershipsService.joinOnCreate(card, input.group_id, actor),
      relocationKeys: ['group_id'],
      onRelocate: (card, input, actor) => this.membershipsService.onRelocate(card, input, actor),
      onMoved: (card, previousAncestorIds, actor) => this.membershipsService.onMoved(card, previousAncestorIds, actor),
    });
    this.fields.registerGroupTypeProviders(
      (cardIds, typeIds) => this.values(cardIds, typeIds),
      (typeId, cardId) => this.choices(typeId, cardId),
    );
  }

  /** `groups` of each card, one query for the batch. */
  async view(cards: CardSummary[]): Promise<Map<number, CardGroupView[]>> {
    const result = new Map<number, CardGroupView[]>(cards.map((c) => [c.id, []]));
    for (const m of await this.memberships.forCards(cards.map((c) => c.id))) {
      result.get(m.cardId)?.push({ id: m.groupId, type_id: m.typeId, title: m.title, card_position: m.position });
    }
    return result;
  }

  /** Group ids of each requested type that each card is in. */
  async values(cardIds: number[], typeIds: number[]): Promise<Map<number, Map<number, number[]>>> {
    const result = new Map<number, Map<number, number[]>>();
    for (const r of await this.memberships.groupIds(cardIds, typeIds)) {
      const byType = result.get(r.cardId) ?? new Map<number, number[]>();
      result.set(r.cardId, byType);
      byType.set(r.typeId, [...(byType.get(r.typeId) ?? []), r.groupId]);
    }
    return result;
  }

  /** `[group id, title]` of the type's groups the card may join (scoped at one of its ancestors). */
  async choices(typeId: number, cardId: number): Promise<Array<[number, string]>> {
    const type = await this.types.find(typeId);
    if (!type) return [];
    const [card] = await this.hierarchy.cardsInOrganization([cardId], type.organizationId);
    if (!card || card.projectId !== type.projectId) return [];
    const groups = await this.groups.scopedAt(card.ancestorIds, type.id);
    return groups.map((g) => [g.id, g.title]);
  }
}
