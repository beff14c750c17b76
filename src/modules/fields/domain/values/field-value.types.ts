export const FIELD_TYPES = [
  'text',
  'content',
  'number',
  'bool',
  'date',
  'time',
  'members',
  'likes',
  'relationships',
  'files',
  'group_type',
] as const;

export type FieldType = (typeof FIELD_TYPES)[number];

export interface FieldOptions {
  time?: boolean;
  period?: boolean;
}

export interface FieldDef {
  name: string;
  type: FieldType;
  options: FieldOptions;
}

/** `YYYY-MM-DD` or `YYYY-MM-DDTHH:MM:SS`; calendar values without a zone. */
export type DateValue = string;

export interface PeriodValue {
  start: DateValue;
  end: DateValue;
}

/** Resolution against the users table happens in the application layer. */
export type MemberRef = { kind: 'user_id'; id: number } | { kind: 'username'; username: string };

export type FileInput =
  | { kind: 'url'; url: string }
  | { kind: 'text'; name: string; content: string }
  | { kind: 'base64'; name: string; mimeType: string; bytes: Buffer };

export type LikeVote = -1 | 0 | 1;

/** One parsed value per type; `null` always means "clear the field". */
export interface NormalizedValueByType {
  text: string;
  content: string;
  number: number;
  bool: boolean;
  date: DateValue | PeriodValue;
  time: string;
  members: MemberRef[];
  likes: LikeVote;
  relationships: number[];
  files: FileInput[];
  group_type: never;
}

export type NormalizedValue = NormalizedValueByType[FieldType] | null;

/** One entry of a multi-valued field, as taken by `append`. */
export interface ListItemByType {
  members: MemberRef;
  relationships: number;
  files: FileInput;
}

export type MultiValuedFieldType = keyof ListItemByType;
export type ListItem = ListItemByType[MultiValuedFieldType];
