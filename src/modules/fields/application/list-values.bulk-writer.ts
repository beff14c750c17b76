import { Injectable } from '@nestjs/common';
import type { Actor } from '../../../shared/domain/actor.js';
import { unreachable } from '../../../shared/domain/unreachable.js';
import { CardAttributeChanged, CardEventBatch } from '../../../shared/events/card.events.js';
import { EventBus } from '../../../shared/events/event-bus.js';
import type { CardSummary } from '../../card-hierarchy/index.js';
import type { FieldDefinition } from '../domain/field-definition.js';
import { emptyValue, fieldTypeHandler, type MemberRef, type ValueStorage } from '../domain/values/index.js';
import { FieldValuesRepository } from '../infrastructure/field-values.repository.js';
import { AttributeValuesReader, type LikesValue } from './attribute-values.reader.js';
import { RelationshipTargetLocks } from './relationship-targets.js';
import { memberIdsOf, relatedIdsOf, TeamReferences, type ResolvedMember, type TeamCards } from './team-references.js';

/** A set of a members, relationships or likes field on one card (the parsed value; null clears it). */
export interface ListSet {
  card: CardSummary;
  field: FieldDefinition;
  value: unknown;
}

/**
 * The storages `BulkListWriter` writes (scalars have bulk statements of
 * their own, files are written card by card, group_type values are
 * grouping's). A new storage must say; one written here needs its cases in
 * `writeRows` and `resolve`, whose switches do not compile without them.
 */
const WRITTEN_IN_BULK = {
  scalar: false,
  members: true,
  relationships: true,
  likes: true,
  files: false,
  groups: false,
} as const satisfies Record<ValueStorage, boolean>;

type BulkListStorage = { [S in ValueStorage]: (typeof WRITTEN_IN_BULK)[S] extends true ? S : never }[ValueStorage];

function storageOf(field: FieldDefinition): ValueStorage {
  return fieldTypeHandler(field.type).storage;
}

function isBulk(storage: ValueStorage): storage is BulkListStorage {
  return WRITTEN_IN_BULK[storage];
}

export function isBulkListStorage(field: FieldDefinition): boolean {
  return isBulk(storageOf(field));
}

/** The storage of a set `write` was given: callers pass only fields of `isBulkListStorage`. */
function bulkStorageOf(field: FieldDefinition): BulkListStorage {
  const storage = storageOf(field);
  if (!isBulk(storage)) throw new Error(`BulkListWriter does not write ${field.type} values`);
  return storage;
}

interface Planned extends ListSet {
  /** The user or card ids of a list, or the caller's vote. */
  stored: number[] | number;
  from: unknown;
  to: unknown;
}

/**
 * Sets of members, relationships and likes values on many cards (an
 * import's batch) in a fixed number of statements, whatever the number of
 * cards and references: the users named resolved in one query and their
 * team membership in one (`TeamReferences`), the related cards checked in
 * one, the values they replace read in one (none for new cards), each kind
 * written in one statement per chunk, and the `card.attribute_changed`
 * entries of what changed as one batch. The same rules and the same entries
 * as a set of one card's value.
 */
@Injectable()
export class BulkListWriter {
  constructor(
    private readonly references: TeamReferences,
    private readonly values: FieldValuesRepository,
    private readonly reader: AttributeValuesReader,
    private readonly events: EventBus,
  ) {}

  /** `fresh`: the cards were created in the caller's transaction and hold no values yet (nothing is read first). */
  async write(sets: ListSet[], actor: Actor, options: { system?: boolean }, fresh: boolean): Promise<number[]> {
    if (!sets.length) return [];
    const stored = await this.resolve(sets);
    const before = fresh ? undefined : await this.reader.attributesOf(
      [...new Map(sets.map((s) => [s.card.id, s.card])).values()],
      [...new Map(sets.map((s) => [s.field.id, s.field])).values()],
    );
    const planned: Planned[] = sets.flatMap((set, i) => {
      const from = before?.byCard.get(set.card.id)?.[set.field.name] ?? emptyValue(set.field.type);
      const to = shownAfter(set.field, from, stored[i], actor.userId);
      return JSON.stringify(from) === JSON.stringify(to) ? [] : [{ ...set, stored: stored[i], from, to }];
    });
    // One statement per storage (members, relationships, then likes).
    for (const storage of (Object.keys(WRITTEN_IN_BULK) as ValueStorage[]).filter(isBulk)) {
      const rows = planned.filter((p) => bulkStorageOf(p.field) === storage);
      if (rows.length) await this.writeRows(storage, rows, actor);
    }
    if (!planned.length) return [];
    await this.events.publish(
      new CardEventBatch(
        planned.map(
          (p) =>
            new CardAttributeChanged({
              cardId: p.card.id,
              projectId: p.card.projectId,
              actorId: actor.userId,
              system: options.system,
              data: { attribute_id: p.field.id, attribute: p.field.name, type: p.field.type, operation: 'set', from: p.from, to: p.to },
            }),
        ),
      ),
    );
    return planned.map((p) => p.card.id);
  }

  private async writeRows(storage: BulkListStorage, rows: Planned[], actor: Actor): Promise<void> {
    switch (storage) {
      case 'members':
      case 'relationships':
        return this.values.replaceLists(storage, rows.map((p) => ({ cardId: p.card.id, attributeId: p.field.id, refs: p.stored as number[] })));
      case 'likes':
        return this.values.setVotes(rows.map((p) => ({ cardId: p.card.id, attributeId: p.field.id, vote: p.stored as number })), actor.userId);
      default:
        return unreachable(storage);
    }
  }

  /** What each set stores, its references checked for all the sets at once (400 naming the field, as a single set). */
  private async resolve(sets: ListSet[]): Promise<Array<number[] | number>> {
    const byTeam = new Map<number, { members: MemberRef[]; cards: number[] }>();
    const team = (organizationId: number) => byTeam.get(organizationId) ?? byTeam.set(organizationId, { members: [], cards: [] }).get(organizationId)!;
    for (const { card, field, value } of sets) {
      const storage = bulkStorageOf(field);
      if (storage === 'members') team(card.organizationId).members.push(...((value as MemberRef[] | null) ?? []));
      if (storage === 'relationships') team(card.organizationId).cards.push(...((value as number[] | null) ?? []));
    }
    const found = new Map<number, { members: Map<string, ResolvedMember>; cards: TeamCards }>();
    for (const [organizationId, refs] of byTeam) {
      const [members, cards] = await Promise.all([
        this.references.members(organizationId, refs.members),
        // The caller's unit holds rows of any step by now: a card held elsewhere is a 55P03, never waited for.
        this.references.lockTeamCards(organizationId, refs.cards, RelationshipTargetLocks.inCallersUnit()),
      ]);
      found.set(organizationId, { members, cards });
    }
    return sets.map(({ card, field, value }) => {
      const storage = bulkStorageOf(field);
      switch (storage) {
        case 'likes':
          return (value as number | null) ?? 0;
        case 'relationships':
          return relatedIdsOf(field.name, card.id, (value as number[] | null) ?? [], found.get(card.organizationId)!.cards);
        case 'members':
          return memberIdsOf(field.name, (value as MemberRef[] | null) ?? [], found.get(card.organizationId)!.members);
        default:
          return unreachable(storage);
      }
    });
  }
}

/** The field's value as a card shows it once `stored` is written (a list as stored; likes with the caller's vote). */
function shownAfter(field: FieldDefinition, before: unknown, stored: number[] | number, userId: number): unknown {
  if (field.type !== 'likes') return stored;
  const votes = { ...(before as LikesValue).votes };
  if (stored === 0) delete votes[String(userId)];
  else votes[String(userId)] = stored as number;
  return { score: Object.values(votes).reduce((sum, v) => sum + v, 0), votes };
}
