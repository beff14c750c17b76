import { Injectable } from '@nestjs/common';
import type { Actor } from '../../../shared/domain/actor.js';
import { NotFoundError } from '../../../shared/domain/domain-error.js';
import type { CardSummary } from '../../card-hierarchy/index.js';
import { WorkspaceApi, type AccessMode } from '../../workspace/index.js';
import type { Group } from '../domain/group.entity.js';
import type { GroupType } from '../domain/group-type.entity.js';
import { GroupNotFoundError, GroupTypeNotFoundError, InvalidGroupingInputError } from '../domain/grouping.errors.js';
import { readId } from '../domain/grouping.policy.js';
import { GroupTypesRepository } from '../infrastructure/group-types.repository.js';
import { GroupsRepository } from '../infrastructure/groups.repository.js';

/** What `bodyGroup` decides about the group an id in the body named (undefined: none). */
function checkedBodyGroup(group: Group | null | undefined, card: CardSummary, purpose: 'join' | 'leave', field: string): Group {
  if (!group || group.organizationId !== card.organizationId) throw new InvalidGroupingInputError(field, 'no such group');
  if (group.projectId !== card.projectId) throw new InvalidGroupingInputError(field, "must be a group of the card's project");
  if (purpose === 'join' && !group.isAvailableTo(card)) {
    throw new InvalidGroupingInputError(field, 'the group is scoped at a card this card is not under');
  }
  return group;
}

/**
 * Who may see and change group types and groups (the rules of their project's
 * team), and how ids are resolved: an id in the path that is unknown or not
 * visible → 404; an id in the body or query → 400 naming the property,
 * whether it is unknown, invisible, of another project, or out of scope.
 */
@Injectable()
export class GroupingAccess {
  constructor(
    private readonly workspace: WorkspaceApi,
    private readonly types: GroupTypesRepository,
    private readonly groups: GroupsRepository,
  ) {}

  async groupType(id: number, actor: Actor, mode: AccessMode): Promise<GroupType> {
    const type = await this.types.find(id);
    if (!type) throw new GroupTypeNotFoundError();
    await this.requireProject(type.projectId, actor, mode, () => new GroupTypeNotFoundError());
    return type;
  }

  async group(id: number, actor: Actor, mode: AccessMode): Promise<Group> {
    const group = await this.groups.find(id);
    if (!group) throw new GroupNotFoundError();
    await this.requireProject(group.projectId, actor, mode, () => new GroupNotFoundError());
    return group;
  }

  /** A group type id from the body: it must be a type of the card's project. */
  async bodyType(raw: unknown, card: CardSummary, field = 'type_id'): Promise<GroupType> {
    const type = await this.types.find(readId(raw, field));
    if (!type || type.organizationId !== card.organizationId) throw new InvalidGroupingInputError(field, 'no such group type');
    if (type.projectId !== card.projectId) {
      throw new InvalidGroupingInputError(field, "must be a group type of the card's project");
    }
    return type;
  }

  /**
   * A group id from the body: a group of the card's project and, when the card
   * is to join it, scoped at one of the card's ancestors. Leaving a group
   * needs no scope, so a card can always be taken out of a group it is in.
   */
  async bodyGroup(raw: unknown, card: CardSummary, purpose: 'join' | 'leave', field = 'group_id'): Promise<Group> {
    return checkedBodyGroup(await this.groups.find(readId(raw, field)), card, purpose, field);
  }

  /**
   * `bodyGroup` for many (card, id) pairs to join, the groups read in one
   * query. The error is a malformed id's, else the first pair (in the given
   * order) whose group fails the checks.
   */
  async bodyGroupsToJoin(named: Array<{ raw: unknown; card: CardSummary; field: string }>): Promise<Group[]> {
    const ids = named.map(({ raw, field }) => readId(raw, field));
    const found = new Map((await this.groups.findMany(ids)).map((g) => [g.id, g]));
    return named.map(({ card, field }, i) => checkedBodyGroup(found.get(ids[i]), card, 'join', field));
  }

  private async requireProject(projectId: number, actor: Actor, mode: AccessMode, notFound: () => Error): Promise<void> {
    try {
      await this.workspace.requireProject(projectId, actor, mode);
    } catch (error) {
      if (error instanceof NotFoundError) throw notFound();
      throw error;
    }
  }
}
