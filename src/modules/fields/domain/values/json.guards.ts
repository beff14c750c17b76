import { hasUnsafeText } from '../../../../shared/domain/safe-text.js';

// Request bodies' objects, as the validation pipe reads them: one rule (shared/domain/plain-object.ts).
export { isPlainObject } from '../../../../shared/domain/plain-object.js';

/** Postgres text and jsonb refuse NUL, and lone surrogates would be silently replaced on the wire (shared/domain/safe-text.ts). */
export function isStorableText(value: string): boolean {
  return !hasUnsafeText(value);
}
