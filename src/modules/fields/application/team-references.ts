import { Injectable } from '@nestjs/common';
import { CardHierarchyApi } from '../../card-hierarchy/index.js';
import { IdentityApi } from '../../identity/index.js';
import { WorkspaceApi } from '../../workspace/index.js';
import { invalidValue, memberKey, type MemberRef } from '../domain/values/index.js';
import type { RelationshipTargetLocks } from './relationship-targets.js';

/** A member reference resolved: the user's id, or why a members value may not name it. */
export type ResolvedMember = { ok: true; userId: number } | { ok: false; message: string };

export function describeMember(ref: MemberRef): string {
  return ref.kind === 'user_id' ? String(ref.id) : `@${ref.username}`;
}

/** The user ids a members value of `field` stores, from what `TeamReferences.members` resolved (400 naming the field). */
export function memberIdsOf(field: string, refs: MemberRef[], resolved: Map<string, ResolvedMember>): number[] {
  const ids = new Set<number>();
  for (const ref of refs) {
    const found = resolved.get(memberKey(ref))!;
    if (!found.ok) throw invalidValue(field, found.message);
    ids.add(found.userId);
  }
  return [...ids];
}

/** The team's cards among those a write names (`TeamReferences.lockTeamCards`), and which of them are a project's top-level card. */
export interface TeamCards {
  ids: Set<number>;
  topLevel: Set<number>;
}

export const NO_TEAM_CARDS: TeamCards = { ids: new Set(), topLevel: new Set() };

/**
 * The card ids a relationships value of `field` on card `cardId` stores,
 * given the team's cards among them (400 naming the field). A value names
 * what `choices` offers (DESIGN.md §5): cards of the team's projects, not
 * the card itself nor a project's top-level card (the project, not a card
 * of it). An archived card is taken: `choices` leaves it out as one not to
 * pick, but a value that holds it since before it was archived must come
 * back as it was sent.
 */
export function relatedIdsOf(field: string, cardId: number, ids: number[], teamCards: TeamCards): number[] {
  if (ids.includes(cardId)) throw invalidValue(field, 'a card cannot be related to itself');
  const missing = ids.find((id) => !teamCards.ids.has(id));
  if (missing !== undefined) throw invalidValue(field, `no card ${missing} in this team`);
  const top = ids.find((id) => teamCards.topLevel.has(id));
  if (top !== undefined) throw invalidValue(field, `card ${top} is a project's top-level card, which a card cannot be related to`);
  return ids;
}

/**
 * What members and relationships values may name (DESIGN.md §5): users of
 * the card's team, cards of the team's projects. Checked for any number of
 * references in a fixed number of queries (a set of one card's value, an
 * import's batch of rows): the usernames in one, the memberships in one,
 * the cards in one.
 */
@Injectable()
export class TeamReferences {
  constructor(
    private readonly identity: IdentityApi,
    private readonly workspace: WorkspaceApi,
    private readonly cards: CardHierarchyApi,
  ) {}

  /** Each ref resolved against the team `organizationId`, by `memberKey`. */
  async members(organizationId: number, refs: MemberRef[]): Promise<Map<string, ResolvedMember>> {
    const usernames = [...new Set(refs.flatMap((r) => (r.kind === 'username' ? [r.username.toLowerCase()] : [])))];
    const byName = new Map((await this.identity.usersNamed(usernames, [])).map((u) => [u.username.toLowerCase(), u.id]));
    const idOf = (ref: MemberRef) => (ref.kind === 'user_id' ? ref.id : byName.get(ref.username.toLowerCase()));
    const ids = [...new Set(refs.map(idOf).filter((id): id is number => id !== undefined))];
    const members = new Set(await this.workspace.membersAmong(organizationId, ids));
    const resolved = new Map<string, ResolvedMember>();
    for (const ref of refs) {
      const id = idOf(ref);
      // One message whether the user exists or not: an answer must not tell
      // which usernames exist beyond the team (as for ids, which it never did).
      resolved.set(
        memberKey(ref),
        id !== undefined && members.has(id)
          ? { ok: true, userId: id }
          : { ok: false, message: `user ${describeMember(ref)} is not a member of this project's team` },
      );
    }
    return resolved;
  }

  /**
   * The ids among `cardIds` that are cards of the team `organizationId`,
   * locked FOR KEY SHARE in ascending id (the lock the rows naming them take)
   * as `locks` allows: those it may not wait for first, with NOWAIT.
   */
  async lockTeamCards(organizationId: number, cardIds: number[], locks: RelationshipTargetLocks): Promise<TeamCards> {
    const { ifFree, wait } = locks.split([...new Set(cardIds)], organizationId);
    const found = new Set<number>();
    for (const [ids, options] of [[ifFree, { wait: false }], [wait, { wait: true }]] as const) {
      if (!ids.length) continue;
      for (const id of await this.cards.lockTeamCardsShared(ids, organizationId, options)) found.add(id);
    }
    // Held now: a card stays top-level (never moved) and others never become so.
    const topLevel = found.size ? (await this.cards.records([...found])).filter((c) => c.parentId === null).map((c) => c.id) : [];
    return { ids: found, topLevel: new Set(topLevel) };
  }

  /** Step 1 of a unit writing one card's values, before the card: `locks.first`, waited for. */
  async lockFirst(locks: RelationshipTargetLocks): Promise<void> {
    const first = locks.first;
    if (first) await this.cards.lockTeamCardsShared(first.ids, first.organizationId);
  }
}
