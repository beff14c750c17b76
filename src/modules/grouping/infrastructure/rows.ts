import { toId as num, toIdOrNull as numOrNull, type Row as Raw } from '../../../shared/persistence/sql.js';
import { CardMembership } from '../domain/card-membership.entity.js';
import { Group } from '../domain/group.entity.js';
import { GroupType } from '../domain/group-type.entity.js';

const date = (v: unknown): Date => new Date(v as string);

export const GROUP_TYPE_COLUMNS = 'id, project_id, organization_id, name, one_group_per_card, created_by, created_at';
export const GROUP_COLUMNS = 'id, type_id, project_id, organization_id, card_id, title, position, created_by, created_at';
export const MEMBERSHIP_COLUMNS = 'card_id, group_id, type_id, position, created_at';

export function toGroupType(r: Raw): GroupType {
  return Object.assign(new GroupType(), {
    id: num(r.id),
    projectId: num(r.project_id),
    organizationId: num(r.organization_id),
    name: r.name as string,
    oneGroupPerCard: Boolean(r.one_group_per_card),
    createdBy: numOrNull(r.created_by),
    createdAt: date(r.created_at),
  });
}

export function toGroup(r: Raw): Group {
  return Object.assign(new Group(), {
    id: num(r.id),
    typeId: num(r.type_id),
    projectId: num(r.project_id),
    organizationId: num(r.organization_id),
    cardId: num(r.card_id),
    title: r.title as string,
    position: num(r.position),
    createdBy: numOrNull(r.created_by),
    createdAt: date(r.created_at),
  });
}

export function toMembership(r: Raw): CardMembership {
  return Object.assign(new CardMembership(), {
    cardId: num(r.card_id),
    groupId: num(r.group_id),
    typeId: num(r.type_id),
    position: num(r.position),
    createdAt: date(r.created_at),
  });
}
