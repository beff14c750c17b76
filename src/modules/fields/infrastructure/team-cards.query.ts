import { Injectable } from '@nestjs/common';
import { UnitOfWork } from '../../../shared/persistence/unit-of-work.js';

export const MAX_CARD_CHOICES = 1000;

/**
 * Read-only look at card titles for the choices of a relationships field.
 * CardHierarchyApi has no listing of a team's cards yet, so this one query
 * reads `cards.cards` directly (never writes it); it should move behind a
 * `CardHierarchyApi` method when card-hierarchy offers one.
 */
@Injectable()
export class TeamCardsQuery {
  constructor(private readonly uow: UnitOfWork) {}

  /** Visible, non-top-level cards of the team other than `exceptCardId`, by project then ref. */
  async choices(organizationId: number, exceptCardId: number): Promise<Array<[number, string]>> {
    const rows = (await this.uow.manager.query(
      `SELECT id, title FROM cards.cards
        WHERE organization_id = $1 AND id <> $2 AND depth > 0 AND NOT hidden
        ORDER BY project_id, ref LIMIT ${MAX_CARD_CHOICES}`,
      [organizationId, exceptCardId],
    )) as Array<{ id: number | string; title: string }>;
    return rows.map((r) => [Number(r.id), r.title]);
  }
}
