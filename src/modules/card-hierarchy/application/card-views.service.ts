import { Injectable } from '@nestjs/common';
import type { Actor } from '../../../shared/domain/actor.js';
import type { CardExtension, CardView } from '../contracts/card-hierarchy.api.js';
import { CardNotFoundError } from '../domain/card.errors.js';
import { CardTreeRepository, type CardRow } from '../infrastructure/card-tree.repository.js';
import { CardExtensions } from './card-extensions.js';

/** Builds the card JSON; each extension fills its key for the whole batch in one go (no N+1). */
@Injectable()
export class CardViewsService {
  constructor(
    private readonly cards: CardTreeRepository,
    private readonly extensions: CardExtensions,
  ) {}

  async one(cardId: number, actor: Actor | null): Promise<CardView> {
    const card = await this.cards.find(cardId);
    if (!card) throw new CardNotFoundError();
    return (await this.many([card], actor))[0];
  }

  /**
   * The JSON of a card just created, from the row its INSERT returned, when no
   * extension took part in the creation: extensions whose value is empty on a
   * new card are not asked.
   */
  async created(row: CardRow, actor: Actor): Promise<CardView> {
    return (await this.many([row], actor, (ext) => !ext.emptyOnNewCard))[0];
  }

  async many(rows: CardRow[], actor: Actor | null, ask: (ext: CardExtension) => boolean = () => true): Promise<CardView[]> {
    const views = rows.map(baseView);
    if (!rows.length) return views;
    for (const ext of this.extensions.all()) {
      if (!ask(ext)) continue;
      const values = await ext.view(rows, actor);
      for (const v of views) if (values.has(v.id)) v[ext.key] = values.get(v.id);
    }
    return views;
  }
}

function baseView(c: CardRow): CardView {
  return {
    id: c.id,
    ref: c.ref,
    project_id: c.projectId,
    parent_id: c.parentId,
    title: c.title,
    state: c.state,
    is_archived: c.isArchived,
    position: c.position,
    depth: c.depth,
    model_id: c.modelId,
    attributes: {},
    groups: [],
    created_at: c.createdAt.toISOString(),
    updated_at: c.updatedAt.toISOString(),
  };
}
