import { hasUnsafeText } from '../../../../shared/domain/safe-text.js';

/**
 * JSON objects only: arrays, Buffers and class instances are not request
 * bodies. Compared by shape rather than `=== Object.prototype` so objects from
 * another realm (a VM context, a worker message) still count.
 */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto: object | null = Object.getPrototypeOf(value) as object | null;
  return proto === null || Object.getPrototypeOf(proto) === null;
}

/** Postgres text and jsonb refuse NUL, and lone surrogates would be silently replaced on the wire (shared/domain/safe-text.ts). */
export function isStorableText(value: string): boolean {
  return !hasUnsafeText(value);
}
