import type { INestApplication } from '@nestjs/common';
import { DataSource } from 'typeorm';

/** A card's `updated_at` with its microseconds, as the database keeps it (the JSON's has milliseconds). */
export async function storedUpdatedAt(app: INestApplication, card: number): Promise<string> {
  const [row] = await app.get(DataSource).query(`SELECT updated_at::text AS at FROM cards.cards WHERE id = $1`, [card]);
  return String(row.at);
}
