import { Injectable } from '@nestjs/common';
import type { Actor } from '../../../shared/domain/actor.js';
import { UnitOfWork } from '../../../shared/persistence/unit-of-work.js';
import { CardHierarchyApi, type CardRecord, type ChildCreations } from '../../card-hierarchy/index.js';
import { FieldsApi, type PreparedValues, type ProjectFields } from '../../fields/index.js';
import { GroupingApi } from '../../grouping/index.js';
import type { BatchSequence, CardView, CreateCardInput, CreatedCard, NewCard, PreparedCards, PreparedCardsOptions, ReadyBatch } from '../contracts/cards.api.js';
import { CardViewsService } from './card-views.service.js';
import { nextTurn } from '../../../shared/event-loop.js';

/** Cards whose values are parsed in one go (see `prepare`). */
const PREPARE_SLICE = 100;

/** A card of a `createMany` batch, flattened depth-first (parents before their children). */
interface PlannedCard {
  card: NewCard;
  /** Index of the parent in the batch; undefined for the batch's own parent. */
  parentIndex?: number;
  /** Request path of the card, for 400s (`cards[0].children[2]`). */
  path: string;
}

/** Card creation, one card (POST /cards/{id}/children) or a batch (imports). Lock order: docs/ARCHITECTURE.md, "The one lock order". */
@Injectable()
export class CreateCardsService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly hierarchy: CardHierarchyApi,
    private readonly fields: FieldsApi,
    private readonly grouping: GroupingApi,
    private readonly views: CardViewsService,
  ) {}

  async create(parentId: number, input: CreateCardInput, actor: Actor): Promise<CardView> {
    if (input.attributes === undefined) return this.createWith(parentId, input, undefined, actor);
    // Values are parsed and their files fetched before the transaction: a slow
    // URL never holds the parent's or the project counter's lock.
    const { card: parent } = await this.hierarchy.requireCard(parentId, actor, 'write');
    const [prepared] = await this.fields.prepareValues(parent.projectId, [{ attributes: input.attributes, property: 'attributes' }], actor);
    try {
      return await this.createWith(parentId, input, prepared, actor);
    } finally {
      prepared.release();
    }
  }

  private async createWith(parentId: number, input: CreateCardInput, prepared: PreparedValues | undefined, actor: Actor): Promise<CardView> {
    const intoGroup = input.group_id !== undefined && input.group_id !== null;
    // Without values or a group, the card as committed is the row the insert
    // returned and its fields unset: the project's field definitions are read
    // in the statement that locks the parent, and no read follows the commit.
    const blank = !intoGroup && (!prepared || prepared.isEmpty);
    if (blank) {
      // One statement, which needs no transaction of its own (UnitOfWork.runStatement; a
      // transaction when a module's in-tx handler takes its events).
      const { card, read } = await this.hierarchy.createChild(parentId, input.title, actor, { alsoRead: this.views.readAlong('c.project_id') });
      return this.views.ofNewCard(card, read.fields);
    }
    const card = await this.uow.run(async () => {
      const { card: created } = await this.hierarchy.createChild(parentId, input.title, actor); // 1. parent, counter and row
      if (intoGroup) await this.grouping.joinNewCards([{ card: created, groupIds: [input.group_id], property: 'group_id' }], actor); // 2.
      if (prepared) await this.fields.writeValues(created, prepared, actor); // 3.
      return created;
    });
    return this.views.one(card.id);
  }

  async createMany(parentId: number, cards: NewCard[], actor: Actor, options: { system?: boolean } = {}): Promise<CreatedCard[]> {
    const plan = flatten(cards);
    if (!plan.length) return [];
    // The parent, the caller's access and the project's field definitions, in one statement.
    const { card: parent, read } = await this.hierarchy.requireCard(parentId, actor, 'write', this.views.readAlong('c.project_id'));
    const batch = await this.prepare(parent.projectId, plan, read.fields, actor);
    try {
      return await this.write(parentId, batch, actor, options);
    } finally {
      batch.release();
    }
  }

  async prepareMany(projectId: number, cards: NewCard[], projectFields: ProjectFields): Promise<PreparedCards> {
    // An import's batches: it maps no files field, so nothing is downloaded for anyone.
    return this.prepare(projectId, flatten(cards), projectFields, undefined);
  }

  createPrepared(parentId: number, batch: PreparedCards, actor: Actor, options: PreparedCardsOptions = {}): Promise<CreatedCard[]> {
    if (!(batch instanceof PreparedBatch)) throw new Error('createPrepared takes what prepareMany returned');
    return batch.size ? this.write(parentId, batch, actor, options) : Promise.resolve([]);
  }

  async openBatches(parentId: number, actor: Actor, options: PreparedCardsOptions = {}): Promise<BatchSequence> {
    const creations = await this.hierarchy.openCreations(parentId, actor, options);
    return { ready: (batch) => this.readyBatch(creations, batch, actor, options) };
  }

  /**
   * A batch that `write` would write in one statement: cards without groups
   * (they join after the insert) or children (a second level), whose values
   * all go along with the insert; undefined for any other.
   */
  private readyBatch(creations: ChildCreations, batch: PreparedCards, actor: Actor, options: PreparedCardsOptions): ReadyBatch | undefined {
    if (!(batch instanceof PreparedBatch)) throw new Error('a batch sequence takes what prepareMany returned');
    const { plan, values } = batch;
    if (!plan.length || plan.some((p) => p.parentIndex !== undefined || p.card.groupIds?.length)) return undefined;
    const along = this.fields.newValuesAlong(values, actor, options);
    if (!along && values.some((v) => !v.isEmpty)) return undefined;
    const creation = creations.ready(plan.map((p) => p.card.title), { along: along?.creation });
    return {
      send: async () => {
        const sent = await creation.send();
        return {
          created: sent.cards.map((c) => ({ id: c.id, ref: c.ref, parentId: c.parentId!, children: [] })),
          // In `write`'s order: the cards' events, then their values'.
          publish: async () => {
            await sent.publish();
            await along?.written(sent.cards);
          },
        };
      },
    };
  }

  /**
   * The batch's values, parsed a slice of cards at a time: between slices the
   * event loop handles other work (an import's statements for the batch
   * before, other requests). Downloads count against `actor`'s share of the
   * upload memory (undefined: an import's batches, which name no file).
   */
  private async prepare(projectId: number, plan: PlannedCard[], projectFields: unknown, actor: Actor | undefined): Promise<PreparedBatch> {
    const batch = new PreparedBatch(projectId, plan, []);
    try {
      for (let at = 0; at < plan.length; at += PREPARE_SLICE) {
        if (at) await nextTurn();
        const slice = plan.slice(at, at + PREPARE_SLICE);
        batch.values.push(
          ...(await this.fields.prepareValues(
            projectId,
            slice.map((p) => ({ attributes: p.card.attributes, property: `${p.path}.attributes` })),
            actor,
            projectFields,
          )),
        );
      }
    } catch (error) {
      // The slices before the refused one reach no caller, who would release them.
      batch.release();
      throw error;
    }
    return batch;
  }

  /**
   * The batch under its parent, in one unit of work; the values' guard
   * refuses a batch prepared for another project. `fieldsHeld` goes to the
   * value writes only (PreparedCardsOptions).
   */
  private write(parentId: number, batch: PreparedBatch, actor: Actor, options: PreparedCardsOptions): Promise<CreatedCard[]> {
    const { plan, values } = batch;
    return this.uow.run(async () => {
      // 1–2. the tree, one level at a time (parents before children, a new card is
      // locked by its own creation), each level in one bulk insert
      const created: CardRecord[] = new Array(plan.length);
      const writtenAlong = new Set<number>();
      // Without groups, a level's scalar values are written in its insert
      // statement (writing along); with groups they follow the groups, so
      // the stream keeps the order of a single creation.
      const along = !plan.some((p) => p.card.groupIds?.length);
      for (const level of levels(plan)) {
        const entries = level.map((i) => ({
          parentId: plan[i].parentIndex === undefined ? parentId : created[plan[i].parentIndex!].id,
          title: plan[i].card.title,
        }));
        const withValues = along ? this.fields.newValuesAlong(level.map((i) => values[i]), actor, options) : undefined;
        const made = await this.hierarchy.createChildren(entries, actor, { ...options, along: withValues?.creation });
        level.forEach((i, k) => (created[i] = made[k]));
        if (withValues) {
          await withValues.written(made);
          for (const i of level) writtenAlong.add(i);
        }
      }
      // 3. every group of the batch, locked once in ascending id
      await this.grouping.joinNewCards(
        plan.map((p, i) => ({ card: created[i], groupIds: p.card.groupIds ?? [], property: `${p.path}.group_ids` })),
        actor,
        options,
      );
      // 4. the values not written along, in bulk
      await this.fields.writeNewValues(
        created.flatMap((card, i) => (writtenAlong.has(i) ? [] : [{ card, prepared: values[i] }])),
        actor,
        options,
      );
      return nest(plan, created, parentId);
    });
  }
}

/** What `prepareMany` returns: the flattened batch and each card's parsed values. */
class PreparedBatch implements PreparedCards {
  constructor(
    readonly projectId: number,
    readonly plan: PlannedCard[],
    readonly values: PreparedValues[],
  ) {}

  get size(): number {
    return this.plan.length;
  }

  /** The memory of the values' downloads, given back to the upload budget. */
  release(): void {
    for (const v of this.values) v.release();
  }
}

/** Indexes of the plan by depth: the batch's own cards first, then their children, and so on. */
function levels(plan: PlannedCard[]): number[][] {
  const depth: number[] = [];
  const out: number[][] = [];
  plan.forEach((p, i) => {
    depth[i] = p.parentIndex === undefined ? 0 : depth[p.parentIndex] + 1;
    (out[depth[i]] ??= []).push(i);
  });
  return out;
}

function flatten(cards: NewCard[], parentIndex?: number, prefix = 'cards', into: PlannedCard[] = []): PlannedCard[] {
  cards.forEach((card, i) => {
    const path = `${prefix}[${i}]`;
    const index = into.push({ card, parentIndex, path }) - 1;
    flatten(card.children ?? [], index, `${path}.children`, into);
  });
  return into;
}

function nest(plan: PlannedCard[], created: CardRecord[], parentId: number): CreatedCard[] {
  const out = created.map((c): CreatedCard => ({ id: c.id, ref: c.ref, parentId: c.parentId ?? parentId, children: [] }));
  const roots: CreatedCard[] = [];
  plan.forEach((p, i) => (p.parentIndex === undefined ? roots : out[p.parentIndex].children).push(out[i]));
  return roots;
}
