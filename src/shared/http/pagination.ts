import type { Response } from 'express';
import { InvalidInputError } from '../domain/domain-error.js';

export const DEFAULT_PER_PAGE = 100;
export const MAX_PER_PAGE = 1000;

export interface PageRequest {
  page: number;
  perPage: number;
}

export interface Page<T> {
  items: T[];
  total: number;
}

function readPositive(raw: unknown, name: string, fallback: number, max: number): number {
  if (raw === undefined || raw === '') return fallback;
  const s = String(raw);
  const n = /^\d{1,9}$/.test(s) ? Number(s) : NaN;
  if (!(n >= 1 && n <= max)) {
    throw new InvalidInputError(`${name} must be an integer from 1 to ${max}`, [
      { field: name, message: `must be an integer from 1 to ${max}` },
    ]);
  }
  return n;
}

/** Reads `page` (from 1) and `per_page` (default 100, max 1000); out of range → 400. */
export function pageRequest(query: { page?: unknown; per_page?: unknown }): PageRequest {
  return {
    page: readPositive(query.page, 'page', 1, 1_000_000_000),
    perPage: readPositive(query.per_page, 'per_page', DEFAULT_PER_PAGE, MAX_PER_PAGE),
  };
}

export function pageOffset(p: PageRequest): number {
  return (p.page - 1) * p.perPage;
}

/** Emits the X-Service-* headers of the spec; NextPage is absent on the last page. */
export function setPageHeaders(res: Response, p: PageRequest, total: number): void {
  const totalPages = Math.max(1, Math.ceil(total / p.perPage));
  res.setHeader('X-Service-Page', String(p.page));
  if (p.page < totalPages) res.setHeader('X-Service-NextPage', String(p.page + 1));
  res.setHeader('X-Service-Total', String(total));
  res.setHeader('X-Service-TotalPages', String(totalPages));
}
