import type { MemberRef } from './field-value.types.js';
import { parseList, readId } from './list-value.parser.js';
import { invalidValue } from './field-value.errors.js';

// Same shape the identity module resolves (`@` + up to 64 of these characters).
const USERNAME_REF = /^@([A-Za-z0-9._-]{1,64})$/;

export function parseMemberRef(field: string, input: unknown): MemberRef {
  const id = readId(input);
  if (id !== null) return { kind: 'user_id', id };
  const match = typeof input === 'string' ? USERNAME_REF.exec(input.trim()) : null;
  if (match) return { kind: 'username', username: match[1] };
  throw invalidValue(field, 'expected a user id or @username');
}

/** Usernames are unique case-insensitively, so @Ann and @ann are one member. */
export function memberKey(ref: MemberRef): string {
  return ref.kind === 'user_id' ? `#${ref.id}` : `@${ref.username.toLowerCase()}`;
}

export function parseMembers(field: string, input: unknown): MemberRef[] | null {
  return parseList(field, input, parseMemberRef, memberKey);
}
