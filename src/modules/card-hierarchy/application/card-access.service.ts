import { Injectable } from '@nestjs/common';
import type { Actor } from '../../../shared/domain/actor.js';
import { NotFoundError } from '../../../shared/domain/domain-error.js';
import { WorkspaceApi, type AccessMode, type Role } from '../../workspace/index.js';
import { CardNotFoundError } from '../domain/card.errors.js';
import { CardTreeRepository, type CardRow } from '../infrastructure/card-tree.repository.js';

/** A card is visible to the members of its project's team (DESIGN.md §3). */
@Injectable()
export class CardAccessService {
  constructor(
    private readonly cards: CardTreeRepository,
    private readonly workspace: WorkspaceApi,
  ) {}

  async require(cardId: number, actor: Actor, mode: AccessMode): Promise<{ card: CardRow; role: Role }> {
    const card = await this.cards.find(cardId);
    if (!card) throw new CardNotFoundError();
    return this.requireFor(card, actor, mode);
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
