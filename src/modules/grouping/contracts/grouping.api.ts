import type { Actor } from '../../../shared/domain/actor.js';

/** A group type as other modules see it. */
export interface GroupTypeInfo {
  id: number;
  projectId: number;
  name: string;
  oneGroupPerCard: boolean;
  /** The `group_type` attribute (fields module) that shows this type's groups. */
  attributeId: number;
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

/**
 * Public API of the grouping module, for modules downstream of it (the
 * importer creates contexts and puts cards in them). Every call joins the
 * caller's unit of work.
 */
export abstract class GroupingApi {
  /** The project's group types, in id order. */
  abstract groupTypes(projectId: number): Promise<GroupTypeInfo[]>;
  /** The project's group type of that name, created (with its field) when there is none. */
  abstract ensureGroupType(projectId: number, name: string, oneGroupPerCard: boolean, actor: Actor): Promise<GroupTypeInfo>;
  /** The group of that title (any case) in that type and scope, created last when there is none. */
  abstract ensureGroup(typeId: number, scopeCardId: number, title: string, actor: Actor): Promise<GroupInfo>;
  /**
   * Puts the card in the group (last in its column) as add-to-group does;
   * `system: true` records the stream entry as a `log` (work of an import).
   */
  abstract addCardToGroup(cardId: number, groupId: number, actor: Actor, options?: { system?: boolean }): Promise<void>;
}
