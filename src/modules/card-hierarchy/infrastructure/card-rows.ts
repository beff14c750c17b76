import { toId, toIdOrNull, toIds } from '../../../shared/persistence/sql.js';
import type { CardRecord, CardState } from '../contracts/card-hierarchy.api.js';

/** A card row as read for views and tree work. */
export interface CardRow extends CardRecord {
  /** Archived, or under an archived card: left out of listings. */
  hidden: boolean;
}

export const CARD_COLUMNS = `id, project_id, organization_id, parent_id, ancestor_ids, depth, ref, title, state,
  is_archived, hidden, position, model_id, created_at, updated_at`;

export interface RawCard {
  id: number | string;
  project_id: number | string;
  organization_id: number | string;
  parent_id: number | string | null;
  ancestor_ids: (number | string)[] | string;
  depth: number;
  ref: number;
  title: string;
  state: CardState;
  is_archived: boolean;
  hidden: boolean;
  position: number;
  model_id: number | string | null;
  created_at: Date | string;
  updated_at: Date | string;
}

export function toRow(r: RawCard): CardRow {
  return {
    id: toId(r.id),
    projectId: toId(r.project_id),
    organizationId: toId(r.organization_id),
    parentId: toIdOrNull(r.parent_id),
    ancestorIds: toIds(r.ancestor_ids),
    depth: Number(r.depth),
    ref: Number(r.ref),
    title: r.title,
    state: r.state,
    isArchived: r.is_archived,
    hidden: r.hidden,
    position: Number(r.position),
    modelId: toIdOrNull(r.model_id),
    createdAt: new Date(r.created_at),
    updatedAt: new Date(r.updated_at),
  };
}
