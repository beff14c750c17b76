import assert from 'node:assert/strict';
import { InvalidInputError } from '../../../../shared/domain/domain-error.js';

/**
 * Test helper (node:assert rather than jest, so the production build that
 * compiles this folder does not pull in a dev dependency): asserts a 400 whose
 * message and `errors` entry both name the field.
 */
export function expectRefused(run: () => unknown, field: string, messagePart?: string | RegExp): InvalidInputError {
  let caught: unknown;
  try {
    run();
  } catch (error) {
    caught = error;
  }
  assert.ok(caught instanceof InvalidInputError, `expected InvalidInputError, got ${String(caught)}`);
  assert.ok(caught.message.startsWith(`${field}: `), `message "${caught.message}" does not name ${field}`);
  assert.equal(caught.errors?.[0]?.field, field);
  if (typeof messagePart === 'string') assert.ok(caught.message.includes(messagePart), `"${caught.message}" lacks "${messagePart}"`);
  if (messagePart instanceof RegExp) assert.match(caught.message, messagePart);
  return caught;
}
