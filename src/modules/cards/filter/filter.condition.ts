import type { CardTerm } from '../../card-hierarchy/index.js';
import type { FieldTerm, FilterFieldRef } from '../../fields/index.js';
import type { GroupTerm } from '../../grouping/index.js';

/** A field term whose SQL the compiler completes (relationship targets come from card-hierarchy). */
export type ConditionFieldTerm =
  | Exclude<FieldTerm, { kind: 'relationship' }>
  | { kind: 'relationship'; fields: FilterFieldRef[]; ref: number };

/**
 * A filter once its names are resolved against the projects' fields, models
 * and users, and its values read: what both the SQL compiler and the
 * reference evaluator of the tests execute. Each leaf belongs to the module
 * that owns the data it tests.
 */
export type Condition =
  | { kind: 'all' }
  | { kind: 'none' }
  | { kind: 'and'; items: Condition[] }
  | { kind: 'or'; items: Condition[] }
  | { kind: 'not'; item: Condition }
  | { kind: 'card'; term: CardTerm }
  | { kind: 'field'; term: ConditionFieldTerm }
  | { kind: 'group'; term: GroupTerm };
