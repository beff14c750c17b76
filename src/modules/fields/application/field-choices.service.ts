import { Injectable } from '@nestjs/common';
import { CardHierarchyApi, type CardSummary } from '../../card-hierarchy/index.js';
import { IdentityApi } from '../../identity/index.js';
import { WorkspaceApi } from '../../workspace/index.js';
import { FieldNotAvailableError, FieldNotFoundError } from '../domain/fields.errors.js';
import { FieldDefinitionsRepository } from '../infrastructure/field-definitions.repository.js';
import type { Choice, FieldChoices } from '../contracts/fields.api.js';
import { lookupField } from './field-lookup.js';

/** At most this many cards are offered as relationship choices. */
export const MAX_CARD_CHOICES = 1000;

/** GET /cards/{id}/attributes/{attr}/choices: `[[value, label], …]` (DESIGN.md §5). */
@Injectable()
export class FieldChoicesService {
  constructor(
    private readonly cards: CardHierarchyApi,
    private readonly workspace: WorkspaceApi,
    private readonly identity: IdentityApi,
    private readonly definitions: FieldDefinitionsRepository,
  ) {}

  /** For a card the caller may read (the caller checked). A group_type field's choices are grouping's. */
  async choices(card: CardSummary, key: string): Promise<FieldChoices> {
    const found = lookupField(await this.definitions.fieldsOfProjects([card.projectId]), card.modelId, key);
    if (!found) throw new FieldNotFoundError();
    if ('unavailable' in found) throw new FieldNotAvailableError('attribute', found.unavailable.name);
    const { field } = found;
    if (field.type === 'group_type' && field.groupTypeId !== null) return { kind: 'group_type', groupTypeId: field.groupTypeId };
    return { kind: 'choices', choices: await this.listed(field.type, card) };
  }

  private async listed(type: string, card: CardSummary): Promise<Choice[]> {
    switch (type) {
      case 'bool':
        return [
          [true, 'Yes'],
          [false, 'No'],
        ];
      case 'likes':
        return [
          [1, 'Like'],
          [0, 'No vote'],
          [-1, 'Dislike'],
        ];
      case 'members': {
        const users = await this.identity.findUsers(await this.workspace.memberIds(card.organizationId));
        return users
          .sort((a, b) => a.username.localeCompare(b.username) || a.id - b.id)
          .map((u) => [u.id, u.displayName ? `${u.displayName} (@${u.username})` : `@${u.username}`]);
      }
      case 'relationships': {
        // What a value may name (relatedIdsOf), less archived cards: a value may keep one, but it is not one to pick.
        const cards = await this.cards.teamCards(card.organizationId, { exceptCardId: card.id, limit: MAX_CARD_CHOICES });
        return cards.map((c) => [c.id, c.title]);
      }
      default:
        return [];
    }
  }
}
