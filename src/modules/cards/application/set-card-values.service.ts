import { Injectable } from '@nestjs/common';
import type { Actor } from '../../../shared/domain/actor.js';
import { CardEventBatch } from '../../../shared/events/card.events.js';
import { UnitOfWork } from '../../../shared/persistence/unit-of-work.js';
import { CardHierarchyApi } from '../../card-hierarchy/index.js';
import { FieldsApi, type PlannedValues, type ValueSetRequest } from '../../fields/index.js';
import { CardViewsService } from './card-views.service.js';

/**
 * Setting field values from a JSON body (POST /cards/{id}/attributes and
 * …/attributes/{name}), answered with the whole card.
 *
 * The usual write, non-empty scalar values, is a guarded write
 * (docs/ARCHITECTURE.md, "Guarded writes"): one statement without a
 * transaction around it (unless an in-tx handler of its events needs one:
 * UnitOfWork.runStatement) that touches the card only if its row is current,
 * the caller may write and the card's model and definitions are still those
 * the values were planned on; it upserts the values, records their entries
 * and reads the rest of the answer. A card whose set was planned before is
 * planned from what was read then, so the request sends two statements with
 * the key's; otherwise one read comes first. When the guard fails, the card
 * is read and the values planned again; when it fails after that read, the
 * locking path runs from the start. Other writes (lists, likes, files,
 * clearing a value) take the locking path after the read.
 */
@Injectable()
export class SetCardValuesService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly hierarchy: CardHierarchyApi,
    private readonly fields: FieldsApi,
    private readonly views: CardViewsService,
  ) {}

  /** The card as JSON text, as the database wrote its row (as listings send cards). */
  async set(cardId: number, request: ValueSetRequest, actor: Actor): Promise<string> {
    let planned = await this.fields.planValues(cardId, request, actor);
    let answer = await this.guarded(cardId, planned, actor);
    if (answer === null && planned.remembered) {
      // What was remembered no longer holds, or the caller may not write: read the card and plan again.
      planned = await this.fields.planValues(cardId, request, actor, { fresh: true });
      answer = await this.guarded(cardId, planned, actor);
    }
    if (answer !== null) return answer;
    await planned.write({ replan: planned.along !== undefined });
    return JSON.stringify(await this.views.one(cardId));
  }

  /** The guarded statement; null when the plan cannot go there, or its guard failed. */
  private async guarded(cardId: number, planned: PlannedValues, actor: Actor): Promise<string | null> {
    const along = planned.along;
    if (!along) return null;
    const touched = await this.uow.runStatement(async () => {
      const found = await this.hierarchy.touchCurrent(cardId, actor, 'write', along.touch, this.views.valuesAlong('ARRAY[c.id]', 'c.project_id'));
      if (found) await along.written(found.along);
      return found;
    }, [CardEventBatch]);
    if (!touched) return null;
    return this.views.afterWrite(touched.card, planned.projectFields, touched.read, (attributes) => along.overlay(attributes, touched.along));
  }
}
