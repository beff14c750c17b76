import { Injectable } from '@nestjs/common';
import type { Actor } from '../../../shared/domain/actor.js';
import { UnitOfWork } from '../../../shared/persistence/unit-of-work.js';
import { CardHierarchyApi } from '../../card-hierarchy/index.js';
import { FieldsApi, type PlannedValues, type ValueSetRequest, type ValuesAlong } from '../../fields/index.js';
import { CardViewsService } from './card-views.service.js';

/**
 * Setting field values from a JSON body (POST /cards/{id}/attributes and
 * …/attributes/{name}), answered with the whole card.
 *
 * The usual write, non-empty scalar values, is a guarded write
 * (docs/ARCHITECTURE.md, "Guarded writes"): one read (the card, the
 * caller's access, the row's version, the definitions), then one statement
 * without a transaction around it that touches the card only if its row is
 * unchanged, upserts the values, records their entries and reads the rest
 * of the answer. Three statements with the key's, where the locking path
 * sends six. When the card changed in between, the statement touches
 * nothing and the locking path runs from the start. Other writes (lists,
 * likes, files, clearing a value) take the locking path at once.
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
    const planned = await this.fields.planValues(cardId, request, actor);
    if (planned.along) {
      const answer = await this.guarded(planned, planned.along, actor);
      if (answer !== null) return answer;
    }
    await planned.write({ replan: planned.along !== undefined });
    return JSON.stringify(await this.views.one(cardId));
  }

  /** The guarded statement; null when the card changed after it was read. */
  private async guarded(planned: PlannedValues, along: ValuesAlong, actor: Actor): Promise<string | null> {
    const touched = await this.uow.runStatement(async () => {
      const found = await this.hierarchy.touchUnchanged(planned.card.id, planned.version, actor, 'write', along.touch, this.views.valuesAlong('ARRAY[c.id]'));
      if (found) await along.written(found.along);
      return found;
    });
    if (!touched) return null;
    return this.views.afterWrite(touched.card, planned.projectFields, touched.read, (attributes) => along.overlay(attributes, touched.along));
  }
}
