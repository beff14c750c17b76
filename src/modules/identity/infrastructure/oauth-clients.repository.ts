import { Injectable } from '@nestjs/common';
import { Sql, toId } from '../../../shared/persistence/sql.js';

/** A registered application. `secretHash` null = public client (no secret, PKCE required). */
export interface OAuthClientRow {
  id: number;
  clientId: string;
  ownerId: number;
  name: string;
  redirectUris: string[];
  secretHash: string | null;
  createdAt: Date;
}

interface Row {
  id: number | string;
  client_id: string;
  owner_id: number | string;
  name: string;
  /** One per line. */
  redirect_uris: string;
  secret_hash: string | null;
  created_at: Date | string;
}

const COLUMNS = 'id, client_id, owner_id, name, redirect_uris, secret_hash, created_at';

function toClient(r: Row): OAuthClientRow {
  return {
    id: toId(r.id),
    clientId: r.client_id,
    ownerId: toId(r.owner_id),
    name: r.name,
    redirectUris: r.redirect_uris.split('\n'),
    secretHash: r.secret_hash,
    createdAt: new Date(r.created_at),
  };
}

@Injectable()
export class OAuthClientsRepository {
  constructor(private readonly sql: Sql) {}

  private async rows(sql: string, params: unknown[]): Promise<OAuthClientRow[]> {
    return (await this.sql.rows<Row>(sql, params)).map(toClient);
  }

  async insert(c: Omit<OAuthClientRow, 'id' | 'createdAt'>): Promise<OAuthClientRow> {
    const [row] = await this.rows(
      `INSERT INTO identity.oauth_clients (client_id, owner_id, name, redirect_uris, secret_hash)
       VALUES ($1, $2, $3, $4, $5) RETURNING ${COLUMNS}`,
      [c.clientId, c.ownerId, c.name, c.redirectUris.join('\n'), c.secretHash],
    );
    return row;
  }

  listForOwner(ownerId: number): Promise<OAuthClientRow[]> {
    return this.rows(`SELECT ${COLUMNS} FROM identity.oauth_clients WHERE owner_id = $1 ORDER BY id`, [ownerId]);
  }

  async findByClientId(clientId: string): Promise<OAuthClientRow | null> {
    const [row] = await this.rows(`SELECT ${COLUMNS} FROM identity.oauth_clients WHERE client_id = $1`, [clientId]);
    return row ?? null;
  }

  async findById(id: number): Promise<OAuthClientRow | null> {
    const [row] = await this.rows(`SELECT ${COLUMNS} FROM identity.oauth_clients WHERE id = $1`, [id]);
    return row ?? null;
  }

  /** Replaces a confidential client's secret; false when the owner has no such confidential client. */
  async replaceSecret(id: number, ownerId: number, secretHash: string): Promise<boolean> {
    const rows = await this.rows(
      `UPDATE identity.oauth_clients SET secret_hash = $3
        WHERE id = $1 AND owner_id = $2 AND secret_hash IS NOT NULL RETURNING ${COLUMNS}`,
      [id, ownerId, secretHash],
    );
    return rows.length === 1;
  }

  /** Deletes an application with its codes and tokens (foreign keys cascade). */
  async delete(id: number, ownerId: number): Promise<boolean> {
    const rows = await this.rows(
      `DELETE FROM identity.oauth_clients WHERE id = $1 AND owner_id = $2 RETURNING ${COLUMNS}`,
      [id, ownerId],
    );
    return rows.length === 1;
  }
}
