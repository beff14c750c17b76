import { Injectable } from '@nestjs/common';
import type { CardSummary } from '../../card-hierarchy/index.js';
import type { FieldDefinition } from '../domain/field-definition.js';

/** What planning a value write needs of a card: the rest of its row does not matter to it. */
export type PlanningCard = Pick<CardSummary, 'id' | 'projectId' | 'organizationId' | 'modelId'>;

/** A project's field definitions as read, with the stamp they were read under (`definitionsStampSql`). */
export interface KnownDefinitions {
  /** As `projectFieldsJsonSql` read them (for the answer's `attributes`). */
  readonly projectFields: unknown;
  readonly fields: FieldDefinition[];
  readonly stamp: string;
}

/** Cards and projects remembered, at most: a few MB for the largest projects' definitions. */
const MAX_CARDS = 20_000;
const MAX_PROJECTS = 1_000;

/**
 * What the last value sets read of cards and their projects' definitions
 * (`CardValuesService.plan`), so that the next set of a card can be planned
 * without reading them first. Nothing here is trusted: the guarded write
 * that uses a plan made from it checks, in its statement, that the card's
 * model and the project's definitions stamp are still those, and the caller's
 * access; when they are not, it writes nothing and the use case reads them
 * again. A card's project never changes (moves stay inside one project). The
 * least recently used entries go first when a map is full; each process has
 * its own maps, and the check makes several processes safe.
 */
@Injectable()
export class ValuePlanCache {
  private readonly cards = new Map<number, PlanningCard>();
  private readonly projects = new Map<number, KnownDefinitions>();

  /** The card and its project's definitions, when both are remembered. */
  get(cardId: number): { card: PlanningCard; definitions: KnownDefinitions } | undefined {
    const card = used(this.cards, cardId);
    const definitions = card && used(this.projects, card.projectId);
    return card && definitions ? { card, definitions } : undefined;
  }

  remember(card: PlanningCard, definitions: KnownDefinitions): void {
    const { id, projectId, organizationId, modelId } = card;
    put(this.cards, id, { id, projectId, organizationId, modelId }, MAX_CARDS);
    put(this.projects, projectId, definitions, MAX_PROJECTS);
  }
}

/** Reads an entry and marks it the most recently used (a Map keeps insertion order). */
function used<K, V>(map: Map<K, V>, key: K): V | undefined {
  const value = map.get(key);
  if (value !== undefined) {
    map.delete(key);
    map.set(key, value);
  }
  return value;
}

function put<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > max) map.delete(map.keys().next().value as K);
}
