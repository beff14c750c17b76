import { Injectable } from '@nestjs/common';
import type { CardSummary } from '../../card-hierarchy/index.js';
import type { CardMembershipInfo } from '../contracts/grouping.api.js';
import { GroupTypesRepository } from '../infrastructure/group-types.repository.js';
import { GroupsRepository } from '../infrastructure/groups.repository.js';
import { MembershipsRepository } from '../infrastructure/memberships.repository.js';

/** Reads of memberships for the card JSON (`groups`, group_type values) and of group choices. */
@Injectable()
export class CardGroupsReader {
  constructor(
    private readonly memberships: MembershipsRepository,
    private readonly groups: GroupsRepository,
    private readonly types: GroupTypesRepository,
  ) {}

  membershipsOf(cardIds: number[]): Promise<CardMembershipInfo[]> {
    return this.memberships.forCards(cardIds);
  }

  /** `[group id, title]` of the type's groups the card may join (scoped at one of its ancestors). */
  async choices(typeId: number, card: CardSummary): Promise<Array<[number, string]>> {
    const type = await this.types.find(typeId);
    if (!type || type.projectId !== card.projectId) return [];
    const groups = await this.groups.scopedAt(card.ancestorIds, type.id);
    return groups.map((g) => [g.id, g.title]);
  }
}
