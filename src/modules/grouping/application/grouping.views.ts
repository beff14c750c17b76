import type { Group } from '../domain/group.entity.js';
import type { GroupType } from '../domain/group-type.entity.js';

/** group_type of DESIGN.md §4. */
export interface GroupTypeView {
  id: number;
  project_id: number;
  name: string;
  one_group_per_card: boolean;
  attribute_id: number;
  created_at: string;
}

/** group of DESIGN.md §4; `card_id` is the card it is scoped at, `position` its place among that scope's groups of its type. */
export interface GroupView {
  id: number;
  type_id: number;
  title: string;
  card_id: number;
  position: number;
  project_id: number;
  created_at: string;
}

/** An entry of the card JSON's `groups`; `card_position` is the card's place in that group's column. */
export interface CardGroupView {
  id: number;
  type_id: number;
  title: string;
  card_position: number;
}

export const toGroupTypeView = (t: GroupType): GroupTypeView => ({
  id: t.id,
  project_id: t.projectId,
  name: t.name,
  one_group_per_card: t.oneGroupPerCard,
  attribute_id: t.attributeId,
  created_at: t.createdAt.toISOString(),
});

export const toGroupView = (g: Group): GroupView => ({
  id: g.id,
  type_id: g.typeId,
  title: g.title,
  card_id: g.cardId,
  position: g.position,
  project_id: g.projectId,
  created_at: g.createdAt.toISOString(),
});
