import type { Actor } from '../../../shared/domain/actor.js';
import type { AccessMode, Role } from '../../workspace/index.js';

export const CARD_STATES = ['undecided', 'dropped', 'accepted', 'in_progress', 'waiting', 'completed', 'closed'] as const;
export type CardState = (typeof CARD_STATES)[number];

/** A card as other modules see it. */
export interface CardSummary {
  id: number;
  projectId: number;
  organizationId: number;
  parentId: number | null;
  /** Ancestor ids, top-level card first, parent last. */
  ancestorIds: number[];
  depth: number;
  ref: number;
  title: string;
  state: CardState;
  isArchived: boolean;
  modelId: number | null;
}

export interface CardAccess {
  card: CardSummary;
  role: Role;
}

/** The card JSON of DESIGN.md §4; extensions add keys such as `attributes` and `groups`. */
export interface CardView {
  id: number;
  ref: number;
  project_id: number;
  parent_id: number | null;
  title: string;
  state: CardState;
  is_archived: boolean;
  position: number;
  depth: number;
  model_id: number | null;
  attributes: Record<string, unknown>;
  groups: unknown[];
  created_at: string;
  updated_at: string;
  [extension: string]: unknown;
}

/**
 * How a downstream module (fields, grouping) takes part in cards without
 * card-hierarchy depending on it: it fills its key of the card JSON, and it
 * consumes its part of a creation or relocation request.
 */
export interface CardExtension {
  /** Key of the card JSON this extension fills (`attributes`, `groups`). */
  key: string;
  /** The key's value for each card, fetched for the whole batch at once. */
  view(cards: CardSummary[], actor: Actor | null): Promise<Map<number, unknown>>;
  /**
   * True when a card just created without any of this extension's creation
   * keys always shows the empty value of the base card JSON under `key` (its
   * `view` would find nothing for it): the creation response then skips `view`.
   */
  emptyOnNewCard?: boolean;
  /** Request body keys this extension accepts on card creation. */
  creationKeys?: string[];
  /** Applies those keys inside the creation transaction; throwing rolls the creation back. */
  onCreate?(card: CardSummary, input: Record<string, unknown>, actor: Actor): Promise<void>;
  /** Request body keys accepted on relocation (besides parent_id and position). */
  relocationKeys?: string[];
  /**
   * Applies those keys inside the relocation transaction, after the card has
   * moved (`card` is the card at its new place). When the request carries one
   * of the extension's keys with a non-null value, `position` is the
   * extension's (a position in a group column) and the card does not move
   * among its siblings. The return value is no longer used.
   */
  onRelocate?(card: CardSummary, input: Record<string, unknown>, actor: Actor): Promise<boolean>;
  /**
   * Called inside the relocation transaction after every change of parent,
   * once the card and its subtree have moved (after any `onRelocate`): `card`
   * is the moved card at its new place, `previousAncestorIds` its ancestor ids
   * before the move (top-level card first). The moved card, its old parent,
   * its new parent's chain and its whole subtree are held FOR UPDATE, so the
   * extension's own locks come after the tree's. Throwing rolls the move back.
   */
  onMoved?(card: CardSummary, previousAncestorIds: number[], actor: Actor): Promise<void>;
}

/** A card as a choice for a relationships field. */
export interface TeamCard {
  id: number;
  title: string;
}

/** Public API of the card-hierarchy module. */
export abstract class CardHierarchyApi {
  /** The card and the caller's role: 404 when the caller cannot see it, 403 when the role is too weak. */
  abstract requireCard(cardId: number, actor: Actor, mode: AccessMode): Promise<CardAccess>;
  /** Cards by id that belong to the given team (others are left out). */
  abstract cardsInOrganization(cardIds: number[], organizationId: number): Promise<CardSummary[]>;
  /** The card JSON, with every extension's key. */
  abstract view(cardId: number, actor: Actor | null): Promise<CardView>;
  /** Sets the card's model association (owned by fields, stored on the card row). */
  abstract setModelId(cardId: number, modelId: number | null): Promise<void>;
  /** Marks the card as changed (updated_at) after an extension changed it. */
  abstract touch(cardId: number): Promise<void>;
  /**
   * Visible (not archived, not under an archived card), non-top-level cards of
   * the team, except `exceptCardId`: by project, then ref; at most `limit`.
   */
  abstract teamCards(organizationId: number, options: { exceptCardId?: number; limit: number }): Promise<TeamCard[]>;
  /**
   * Takes FOR KEY SHARE on the given cards, in ascending id order, inside the
   * caller's transaction (it must be in one): they cannot be deleted (nor their
   * key changed) until it commits, while their other columns (positions,
   * titles) stay writable. Cards that no longer exist are skipped. Callers
   * that take their own locks afterwards rely on this order (see grouping's
   * CardLocks).
   */
  abstract lockCardsShared(cardIds: number[]): Promise<void>;
  /**
   * Ids of the card and all its descendants, ascending; [] when the card does
   * not exist. Read in the caller's transaction (uses the ancestor-ids index).
   */
  abstract subtreeIds(cardId: number): Promise<number[]>;
  /** Adds a downstream module's part of the card JSON and of card requests. */
  abstract registerExtension(extension: CardExtension): void;
}
