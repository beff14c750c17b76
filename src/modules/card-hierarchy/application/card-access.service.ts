import { Injectable } from '@nestjs/common';
import type { Actor } from '../../../shared/domain/actor.js';
import { NotFoundError } from '../../../shared/domain/domain-error.js';
import { WorkspaceApi, type AccessMode, type Role } from '../../workspace/index.js';
import { CardNotFoundError } from '../domain/card.errors.js';
import { CardTreeRepository, type CardRow } from '../infrastructure/card-tree.repository.js';

/** Name of the caller's role among the values read along with a card or a page. */
const ROLE = '__role';

/**
 * `alsoRead` with the caller's role (`roleSql`) added, for one statement that
 * reads both; `splitRole` takes the role back out of what it read.
 */
export function withRole(alsoRead: Record<string, string> | undefined, roleSql: string): Record<string, string> {
  return { ...alsoRead, [ROLE]: roleSql };
}

export function splitRole(read: Record<string, unknown>): { role: Role | null; read: Record<string, unknown> } {
  const { [ROLE]: role, ...rest } = read;
  return { role: (role as Role | null | undefined) ?? null, read: rest };
}

export interface CardWithAccess {
  card: CardRow;
  role: Role;
  /** What `alsoRead` asked for, by name. */
  read: Record<string, unknown>;
}

/** A card is visible to the members of its project's team (DESIGN.md §3). */
@Injectable()
export class CardAccessService {
  constructor(
    private readonly cards: CardTreeRepository,
    private readonly workspace: WorkspaceApi,
  ) {}

  /** The card and the caller's access to it (and `alsoRead`), in one statement. */
  require(cardId: number, actor: Actor, mode: AccessMode, alsoRead: Record<string, string> = {}): Promise<CardWithAccess> {
    return this.read(cardId, actor, mode, 'read', alsoRead);
  }

  /** `CardHierarchyApi.lockCardToTouch`: the row locked as a touch locks it (not touched) and access checked, in one statement. */
  lockToTouch(cardId: number, actor: Actor, mode: AccessMode, alsoRead: Record<string, string> = {}): Promise<CardWithAccess> {
    return this.read(cardId, actor, mode, 'lockToTouch', alsoRead);
  }

  /**
   * SQL over a card aliased `c`, true when the caller (the user id at `$2`)
   * may work on it in `mode`: for a statement that writes only if so. When
   * it wrote nothing, `lock` or `require` tells the caller why (404, 403).
   */
  allowsSql(mode: AccessMode): string {
    return this.workspace.memberAllowsSql('c.organization_id', '$2', mode);
  }

  /**
   * The card locked FOR UPDATE and the caller's access checked on the locked
   * row, in one statement; nothing is written before the check passes.
   * `alsoRead`: SQL of other modules over the card's columns, read in that
   * statement too (`CardHierarchyApi.createChild`'s `alsoRead`).
   */
  lock(cardId: number, actor: Actor, mode: AccessMode, alsoRead: Record<string, string> = {}): Promise<CardWithAccess> {
    return this.read(cardId, actor, mode, 'lock', alsoRead);
  }

  /**
   * Cards of one team locked FOR UPDATE in id order (missing ones left out),
   * with the caller's access checked on them in the same statement: 404
   * outside the team, 403 for a weak role, nothing written before.
   */
  /** `lockMany` where every card must exist: 404 when one is missing. */
  async lockAll(ids: number[], actor: Actor, mode: AccessMode): Promise<CardRow[]> {
    const cards = await this.lockMany(ids, actor, mode);
    if (cards.length !== new Set(ids).size) throw new CardNotFoundError();
    return cards;
  }

  async lockMany(ids: number[], actor: Actor, mode: AccessMode): Promise<CardRow[]> {
    const found = await this.cards.lockManyWith(ids, withRole({}, this.workspace.memberRoleSql('c.organization_id', '$2')), [actor.userId]);
    if (!found.length) return [];
    if (found.some((f) => f.card.organizationId !== found[0].card.organizationId)) throw new Error('lockMany takes cards of one team');
    this.check(found[0].card, splitRole(found[0].extras).role, mode);
    return found.map((f) => f.card);
  }

  private check(card: CardRow, memberRole: Role | null, mode: AccessMode): Role {
    try {
      return this.workspace.accessFromRole(card.organizationId, memberRole, mode).role;
    } catch (error) {
      if (error instanceof NotFoundError) throw new CardNotFoundError();
      throw error;
    }
  }

  private async read(cardId: number, actor: Actor, mode: AccessMode, how: 'read' | 'lock' | 'lockToTouch', alsoRead: Record<string, string> = {}): Promise<CardWithAccess> {
    const extras = withRole(alsoRead, this.workspace.memberRoleSql('c.organization_id', '$2'));
    const found =
      how === 'lockToTouch'
        ? await this.cards.lockToTouchWith(cardId, extras, [actor.userId])
        : await this.cards.findWith(cardId, extras, [actor.userId], how === 'lock');
    if (!found) throw new CardNotFoundError();
    const { role: memberRole, read } = splitRole(found.extras);
    return { card: found.card, role: this.check(found.card, memberRole, mode), read };
  }
}
