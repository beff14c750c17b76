import type { Group } from '../domain/group.entity.js';

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

export const toGroupView = (g: Group): GroupView => ({
  id: g.id,
  type_id: g.typeId,
  title: g.title,
  card_id: g.cardId,
  position: g.position,
  project_id: g.projectId,
  created_at: g.createdAt.toISOString(),
});
