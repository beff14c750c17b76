import { Injectable } from '@nestjs/common';
import { UnitOfWork } from '../../../shared/persistence/unit-of-work.js';
import { CardStreamEntry } from './card-stream-entry.entity.js';

@Injectable()
export class CardStreamRepository {
  constructor(private readonly uow: UnitOfWork) {}

  /** Reserves an entry id, so a comment can be answered with the entry the recorder writes. */
  async nextId(): Promise<number> {
    const [row] = (await this.uow.manager.query(
      `SELECT nextval(pg_get_serial_sequence('cards.card_stream', 'id')) AS id`,
    )) as { id: number }[];
    return Number(row.id);
  }

  find(id: number): Promise<CardStreamEntry | null> {
    return this.uow.manager.getRepository(CardStreamEntry).findOneBy({ id });
  }

  /** Newest first. */
  async page(cardId: number, limit: number, offset: number): Promise<{ items: CardStreamEntry[]; total: number }> {
    const [items, total] = await this.uow.manager.getRepository(CardStreamEntry).findAndCount({
      where: { cardId },
      order: { id: 'DESC' },
      take: limit,
      skip: offset,
    });
    return { items, total };
  }
}
