import type { Response } from 'express';

/**
 * A body that is JSON text already (card listings, whose cards the database
 * writes as JSON: docs/PERFORMANCE.md, issue 15, fifth pass): typed as JSON
 * and returned for the handler to answer with, sent as it is.
 */
export function jsonText(res: Response, text: string): string {
  res.type('application/json');
  return text;
}

/** A listing's items: JSON text (the cards) sent as it is, or ids (`only_ids`) serialised as usual. */
export function jsonItems(res: Response, items: string | number[]): string | number[] {
  return typeof items === 'string' ? jsonText(res, items) : items;
}
