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

  /** `CardHierarchyApi.touchChecked`: updated_at set (the row locked) and access checked, in one statement. */
  touch(cardId: number, actor: Actor, mode: AccessMode): Promise<CardWithAccess> {
    return this.read(cardId, actor, mode, 'touch');
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

  private async read(cardId: number, actor: Actor, mode: AccessMode, how: 'read' | 'lock' | 'touch', alsoRead: Record<string, string> = {}): Promise<CardWithAccess> {
    const extras = withRole(alsoRead, this.workspace.memberRoleSql('c.organization_id', '$2'));
    const found =
      how === 'touch' ? await this.cards.touchWith(cardId, extras, [actor.userId]) : await this.cards.findWith(cardId, extras, [actor.userId], how === 'lock');
    if (!found) throw new CardNotFoundError();
    const { role: memberRole, read } = splitRole(found.extras);
    try {
      const { role } = this.workspace.accessFromRole(found.card.organizationId, memberRole, mode);
      return { card: found.card, role, read };
    } catch (error) {
      if (error instanceof NotFoundError) throw new CardNotFoundError();
      throw error;
    }
  }

  /** The same check for a card already read (or locked) by the caller: 404 outside its team, 403 for a weak role. */
  async requireFor(card: CardRow, actor: Actor, mode: AccessMode): Promise<{ card: CardRow; role: Role }> {
    try {
      const { role } = await this.workspace.requireOrganization(card.organizationId, actor, mode);
      return { card, role };
    } catch (error) {
      if (error instanceof NotFoundError) throw new CardNotFoundError();
      throw error;
    }
  }
}
