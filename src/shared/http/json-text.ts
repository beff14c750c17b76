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

/**
 * A JSON array as the text of its items in parts, each part items joined by
 * commas without the brackets (`''` for none): `first`, read before the
 * answer starts, and `rest`, each read when the part before it is written.
 */
export interface JsonArrayParts {
  first: string;
  rest?: AsyncIterable<string>;
}

/**
 * Answers a GET with the array `parts` holds. One part is sent as one text,
 * as `jsonText` does (with its length and ETag). More are written one by one
 * (chunked), so no answer is one string, which V8 caps at 2^29 characters, and
 * the memory held is about one part: the next part is read only once the
 * socket has taken the one before ('drain'). The status is decided by the
 * first part: an error after it cannot become a problem; it is logged
 * with the request (`res.err`) and the connection is cut, so the client sees
 * an answer that never ended rather than a short array.
 */
export async function sendJsonArray(res: Response, parts: JsonArrayParts): Promise<void> {
  res.type('application/json');
  if (!parts.rest) {
    res.send(`[${parts.first}]`);
    return;
  }
  res.status(200);
  let empty = !parts.first;
  try {
    if (!(await written(res, `[${parts.first}`))) return;
    for await (const part of parts.rest) {
      if (!part) continue;
      if (!(await written(res, `${empty ? '' : ','}${part}`))) return; // the client left: no more parts are read
      empty = false;
    }
    res.end(']');
  } catch (error) {
    (res as Response & { err?: unknown }).err = error;
    res.destroy();
  }
}

/** Writes `text`, then waits until the socket has taken what the response buffered; false when the response was closed. */
async function written(res: Response, text: string): Promise<boolean> {
  // A destroyed response takes nothing and says so no more ('close' came).
  if (res.destroyed) return false;
  if (!res.write(text) && !res.destroyed) {
    await new Promise<void>((resolve) => {
      const done = () => {
        res.off('drain', done);
        res.off('close', done);
        resolve();
      };
      res.on('drain', done);
      res.on('close', done);
    });
  }
  return !res.destroyed;
}
