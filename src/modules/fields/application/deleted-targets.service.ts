import { Injectable } from '@nestjs/common';
import type { Actor } from '../../../shared/domain/actor.js';
import { CardAttributeChanged, CardEventBatch } from '../../../shared/events/card.events.js';
import { EventBus } from '../../../shared/events/event-bus.js';
import { RelationshipReferencesRepository } from '../infrastructure/relationship-references.repository.js';

/**
 * Deleting a card deletes the relationship values naming it (DESIGN.md §4).
 * The foreign key would cascade them away with the card, unseen: the cards
 * holding them would change with no stream entry (§9) and an `updated_at`
 * that does not move. So a deletion removes them itself, before its cascade,
 * and records each list that lost entries as a `pop` of those entries by the
 * deleting user (`from` and `to` the whole list, as a pop records it).
 */
@Injectable()
export class DeletedTargetsService {
  constructor(
    private readonly references: RelationshipReferencesRepository,
    private readonly events: EventBus,
  ) {}

  /** The cards outside `cardIds` whose relationship values name one of them, ascending id. */
  cardsNaming(cardIds: number[]): Promise<number[]> {
    return this.references.cardsNaming(cardIds);
  }

  /** Removes those values and records the lists that changed, as one batch; the ids of the cards changed, ascending. */
  async remove(cardIds: number[], actor: Actor): Promise<number[]> {
    const lists = await this.references.removeNaming(cardIds);
    if (!lists.length) return [];
    const doomed = new Set(cardIds);
    await this.events.publish(
      new CardEventBatch(
        lists.map(
          (list) =>
            new CardAttributeChanged({
              cardId: list.cardId,
              projectId: list.projectId,
              actorId: actor.userId,
              data: {
                attribute_id: list.attributeId,
                attribute: list.name,
                type: list.type,
                operation: 'pop',
                from: list.before,
                to: list.before.filter((id) => !doomed.has(id)),
                reason: 'target_deleted',
              },
            }),
        ),
      ),
    );
    return [...new Set(lists.map((list) => list.cardId))];
  }
}
