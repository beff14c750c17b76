import type { Actor } from '../../../shared/domain/actor.js';
import type { CardSummary, PreparedMove } from '../../card-hierarchy/index.js';

/** A group type as other modules see it. Its `group_type` field is fields' (which stores the link). */
export interface GroupTypeInfo {
  id: number;
  projectId: number;
  name: string;
  oneGroupPerCard: boolean;
  createdAt: Date;
}

/** A group as other modules see it. */
export interface GroupInfo {
  id: number;
  typeId: number;
  title: string;
  /** The card the group is scoped at: cards under it may join the group. */
  cardId: number;
  position: number;
}

/** A card in a group, at `position` in the group's column. */
export interface CardMembershipInfo {
  cardId: number;
  groupId: number;
  typeId: number;
  /** The group's title. */
  title: string;
  position: number;
}

export interface GroupTypeChanges {
  name?: unknown;
  one_group_per_card?: unknown;
}

/** Cards just created, each with the group ids (as sent) it joins. */
export interface NewCardGroups {
  card: CardSummary;
  groupIds: unknown[];
  /** Request property named by a 400 about these ids (`group_id`). */
  property: string;
}

/**
 * Public API of the grouping module: group types, groups scoped at cards, and
 * card memberships. Writes join the caller's unit of work (and open one when
 * there is none). Grouping's own lock order inside a write: type rows
 * (ascending id), then group rows (ascending id), then memberships; the card
 * rows come before, and touching the cards after.
 */
export abstract class GroupingApi {
  /** The project's group types, in id order. */
  abstract groupTypes(projectId: number): Promise<GroupTypeInfo[]>;
  /** A group type the caller may see (404 otherwise; 403 when the role is too weak for `mode`). */
  abstract requireGroupType(typeId: number, actor: Actor, mode: 'read' | 'write'): Promise<GroupTypeInfo>;
  /** The project's group type of that name (any case), if any. */
  abstract findGroupType(projectId: number, name: string): Promise<GroupTypeInfo | null>;
  /** Creates a group type (409 on a taken name); its field is created by the caller (`cards`). */
  abstract createGroupType(projectId: number, input: { name: unknown; one_group_per_card?: unknown }, actor: Actor): Promise<GroupTypeInfo>;
  /** Renames and/or switches one_group_per_card; returns the type and its name before. */
  abstract updateGroupType(typeId: number, changes: GroupTypeChanges, actor: Actor): Promise<{ type: GroupTypeInfo; previousName: string }>;
  /** Deletes a group type with its groups and memberships (each removal on its card's stream). */
  abstract deleteGroupType(typeId: number, actor: Actor): Promise<void>;
  /** Why a group could not have `title` (trimmed, non-empty) as its title, or undefined: for a caller that checks titles before it writes any. */
  abstract groupTitleProblem(title: string): string | undefined;
  /** The group of that title (any case) in that type and scope, created last when there is none. */
  abstract ensureGroup(typeId: number, scopeCardId: number, title: string, actor: Actor): Promise<GroupInfo>;
  /**
   * `ensureGroup` for many titles of one type and scope, answered in their
   * order: an existing group matches exactly, else in any case (`foldCase`);
   * the missing ones are created last in the scope, in the order given. One
   * lock of the type and a fixed number of statements, whatever the count.
   */
  abstract ensureGroups(typeId: number, scopeCardId: number, titles: string[], actor: Actor): Promise<GroupInfo[]>;
  /**
   * Puts each card in its group (last in its column) as add-to-group without
   * a position does, for many (card, group) pairs of one team, in order: the
   * cards locked FOR UPDATE with the caller's write access in one statement,
   * the memberships written in one, their entries as one batch. `system:
   * true` records the entries as `log` (work of an import).
   */
  abstract addCardsToGroups(entries: Array<{ cardId: number; groupId: number }>, actor: Actor, options?: { system?: boolean }): Promise<void>;
  /** Memberships of the cards, by card, type, group position, group id: one query for the batch. */
  abstract membershipsOf(cardIds: number[]): Promise<CardMembershipInfo[]>;
  /**
   * SQL of the same memberships for the cards whose ids are the array
   * `cardIdsSql` (in the caller's statement), read along with their rows;
   * `membershipsRead` turns what it returned into `membershipsOf`'s answer.
   * `projectIdSql`: the cards' one project, when they have one; then the
   * memberships are read only if it has a group type.
   */
  abstract membershipsSql(cardIdsSql: string, projectIdSql?: string): string;
  abstract membershipsRead(value: unknown): CardMembershipInfo[];
  /** `[group id, title]` of the type's groups a card may join (scoped at one of its ancestors). */
  abstract groupChoices(typeId: number, card: CardSummary): Promise<Array<[number, string]>>;
  /**
   * New cards (locked by their creation) join groups, last in each column.
   * Locks every type, then every group, each in ascending id, once for the batch.
   */
  abstract joinNewCards(entries: NewCardGroups[], actor: Actor, options?: { system?: boolean }): Promise<void>;
  /**
   * A relocation's grouping locks, taken between `CardHierarchyApi.prepareMove`
   * and `finishMove`: the types FOR SHARE, then the groups, each in ascending
   * id, that `moveIntoGroup` (with `group`, checked here as it will be: 400
   * naming `group.property`) and `leaveLostScopes` will lock, in one pass
   * (on their own they would lock them in two). Those then find them held.
   * Nothing is written.
   */
  abstract lockForRelocation(move: PreparedMove, group?: { id: unknown; property: string }): Promise<void>;
  /**
   * Relocation with `group_id`: the card (already at its new place, held
   * FOR UPDATE by the move) goes into the group at `position` of its column,
   * leaving its other groups of the type. `lockForRelocation` comes first.
   */
  abstract moveIntoGroup(card: CardSummary, group: { id: unknown; property: string }, position: number | undefined, actor: Actor): Promise<void>;
  /**
   * After a move to another parent: takes the card and its subtree
   * (`subtreeIds`, locked by the move) out of the groups scoped at the
   * ancestors it lost (stream reason `moved_out_of_scope`).
   * `lockForRelocation` comes first.
   */
  abstract leaveLostScopes(card: CardSummary, previousAncestorIds: number[], subtreeIds: number[], actor: Actor): Promise<void>;
  /**
   * Before a card deletion cascades (the subtree held FOR UPDATE): locks the
   * types (FOR SHARE) and then the groups it will touch, each ascending id.
   */
  abstract lockForCardDeletion(subtreeIds: number[]): Promise<void>;
  /** POST /cards/{id}/add-to-group. */
  abstract addToGroup(cardId: number, input: { group_id: unknown; position?: unknown }, actor: Actor): Promise<void>;
  /** POST /cards/{id}/remove-from-group. */
  abstract removeFromGroup(cardId: number, input: { group_id: unknown }, actor: Actor): Promise<void>;
  /** POST /cards/{id}/remove-from-group-type. */
  abstract removeFromGroupType(cardId: number, input: { type_id: unknown }, actor: Actor): Promise<void>;
}
