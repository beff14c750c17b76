import { invalidValue } from './field-value.errors.js';

/** Group memberships carry positions and one-group rules that a plain value cannot express. */
export function parseGroupType(field: string, _input: unknown): never {
  throw invalidValue(
    field,
    'a group_type value cannot be set through the attribute operations; ' +
      'use the grouping operations (add-to-group, remove-from-group, relocate)',
  );
}
