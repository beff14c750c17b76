import { Injectable } from '@nestjs/common';
import type { Actor } from '../../../shared/domain/actor.js';
import { CardAttributeChanged, CardEventBatch } from '../../../shared/events/card.events.js';
import { EventBus } from '../../../shared/events/event-bus.js';
import type { CardSummary } from '../../card-hierarchy/index.js';
import type { FieldDefinition } from '../domain/field-definition.js';
import { emptyValue, fieldTypeHandler, type MemberRef } from '../domain/values/index.js';
import { FieldValuesRepository, type ListTable } from '../infrastructure/field-values.repository.js';
import { AttributeValuesReader, type LikesValue } from './attribute-values.reader.js';
import { RelationshipTargetLocks } from './relationship-targets.js';
import { memberIdsOf, relatedIdsOf, TeamReferences, type ResolvedMember, type TeamCards } from './team-references.js';

/** A set of a members, relationships or likes field on one card (the parsed value; null clears it). */
export interface ListSet {
  card: CardSummary;
  field: FieldDefinition;
  value: unknown;
}

/** The storages `BulkListWriter` writes. */
export function isBulkListStorage(field: FieldDefinition): boolean {
  const storage = fieldTypeHandler(field.type).storage;
  return storage === 'members' || storage === 'relationships' || storage === 'likes';
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
    for (const kind of ['members', 'relationships'] as const) {
      const rows = planned.filter((p) => fieldTypeHandler(p.field.type).storage === kind);
      if (rows.length) await this.values.replaceLists(kind as ListTable, rows.map((p) => ({ cardId: p.card.id, attributeId: p.field.id, refs: p.stored as number[] })));
    }
    const votes = planned.filter((p) => p.field.type === 'likes');
    if (votes.length) await this.values.setVotes(votes.map((p) => ({ cardId: p.card.id, attributeId: p.field.id, vote: p.stored as number })), actor.userId);
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

  /** What each set stores, its references checked for all the sets at once (400 naming the field, as a single set). */
  private async resolve(sets: ListSet[]): Promise<Array<number[] | number>> {
    const byTeam = new Map<number, { members: MemberRef[]; cards: number[] }>();
    const team = (organizationId: number) => byTeam.get(organizationId) ?? byTeam.set(organizationId, { members: [], cards: [] }).get(organizationId)!;
    for (const { card, field, value } of sets) {
      const storage = fieldTypeHandler(field.type).storage;
      if (storage === 'members') team(card.organizationId).members.push(...((value as MemberRef[] | null) ?? []));
      if (storage !== 'relationships') continue;
      team(card.organizationId).cards.push(...((value as number[] | null) ?? []));
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
      const storage = fieldTypeHandler(field.type).storage;
      if (storage === 'likes') return (value as number | null) ?? 0;
      const team = found.get(card.organizationId)!;
      return storage === 'relationships'
        ? relatedIdsOf(field.name, card.id, (value as number[] | null) ?? [], team.cards)
        : memberIdsOf(field.name, (value as MemberRef[] | null) ?? [], team.members);
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
