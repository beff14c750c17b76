import { Injectable } from '@nestjs/common';
import type { Actor } from '../../../shared/domain/actor.js';
import { requireId } from '../../../shared/domain/ids.js';
import { CardEventBatch, CardModelChanged } from '../../../shared/events/card.events.js';
import { EventBus } from '../../../shared/events/event-bus.js';
import { UnitOfWork } from '../../../shared/persistence/unit-of-work.js';
import { CardHierarchyApi, type CardSummary } from '../../card-hierarchy/index.js';
import { InvalidFieldInputError } from '../domain/fields.errors.js';
import { isPlainObject } from '../domain/values/json.guards.js';
import { FieldDefinitionsRepository } from '../infrastructure/field-definitions.repository.js';

/**
 * POST /cards/{id}/model. The association is stored on the card row (owned by
 * card-hierarchy). Values of the old model's fields stay stored: they are
 * hidden while the card has another model and shown again if it comes back.
 */
@Injectable()
export class CardModelService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly cards: CardHierarchyApi,
    private readonly definitions: FieldDefinitionsRepository,
    private readonly events: EventBus,
  ) {}

  /** `system: true` records the entry as a `log` (an import setting the model of its rows' cards). */
  async setModel(cardId: number, body: unknown, actor: Actor, options: { system?: boolean } = {}): Promise<void> {
    // No body, `{}` and `{"model_id": null}` all remove the model: the original's clients send the first two.
    const input = body ?? {};
    if (!isPlainObject(input)) throw new InvalidFieldInputError('model_id', 'send an object: {"model_id": id or null}');
    const extra = Object.keys(input).find((k) => k !== 'model_id');
    if (extra !== undefined) throw new InvalidFieldInputError(extra, 'is not a known property');
    const modelId = input.model_id === undefined || input.model_id === null ? null : requireId(input.model_id, 'model_id');
    await this.uow.run(async () => {
      // Locked, not touched: the model's update is the card's one update in
      // this transaction. A second update of a row this transaction already
      // updated makes PostgreSQL check the parent_id foreign key again,
      // which takes the parent FOR KEY SHARE after the card, out of the lock
      // order: a tree write holding the parent and waiting for the card
      // deadlocked with it (docs/ARCHITECTURE.md, "The one lock order").
      const [card] = await this.cards.lockCards([cardId], actor, 'write');
      const modelName = await this.modelName(modelId, card.projectId);
      if (card.modelId === modelId) return;
      await this.cards.setModelId(cardId, modelId);
      await this.events.publish(modelChanged(card, modelId, modelName, actor, options));
    });
  }

  async setModels(entries: Array<{ cardId: number; modelId: number | null }>, actor: Actor, options: { system?: boolean } = {}): Promise<void> {
    if (!entries.length) return;
    await this.uow.run(async () => {
      const cards = new Map((await this.cards.lockCards(entries.map((e) => e.cardId), actor, 'write')).map((c) => [c.id, c]));
      const names = new Map<string, string | null>();
      const changes: Array<{ cardId: number; modelId: number | null }> = [];
      const events: CardModelChanged[] = [];
      for (const { cardId, modelId } of entries) {
        const card = cards.get(cardId)!;
        const key = `${modelId}:${card.projectId}`;
        if (!names.has(key)) names.set(key, await this.modelName(modelId, card.projectId));
        if (card.modelId === modelId) continue;
        changes.push({ cardId, modelId });
        events.push(modelChanged(card, modelId, names.get(key)!, actor, options));
        cards.set(cardId, { ...card, modelId });
      }
      await this.cards.setModelIds(changes);
      await this.events.publish(new CardEventBatch(events));
    });
  }

  /** The model's name (null for no model); 400 unless it is a model of the project. */
  private async modelName(modelId: number | null, projectId: number): Promise<string | null> {
    if (modelId === null) return null;
    const model = await this.definitions.findModel(modelId);
    if (!model || model.projectId !== projectId) throw new InvalidFieldInputError('model_id', `no model ${modelId} in this card's project`);
    return model.name;
  }
}

function modelChanged(card: CardSummary, to: number | null, model: string | null, actor: Actor, options: { system?: boolean }): CardModelChanged {
  return new CardModelChanged({
    cardId: card.id,
    projectId: card.projectId,
    actorId: actor.userId,
    system: options.system,
    data: { from: card.modelId, to, model },
  });
}
