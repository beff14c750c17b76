/**
 * Public API of the fields module. Grouping uses it to own the `group_type`
 * field of each group type, and hands fields the functions it needs to show
 * those fields' values and choices (fields does not depend on grouping).
 */
export interface GroupTypeFieldSpec {
  projectId: number;
  groupTypeId: number;
  /** Field name; unique among the project's fields (409 otherwise). */
  name: string;
}

/** Ids of the groups of each requested group type that each card is in. */
export type GroupTypeValuesProvider = (
  cardIds: number[],
  groupTypeIds: number[],
) => Promise<Map<number, Map<number, number[]>>>;

/** `[value, label]` choices of a group_type field for a card (its groups visible from that card). */
export type GroupTypeChoicesProvider = (groupTypeId: number, cardId: number) => Promise<Array<[number, string]>>;

export abstract class FieldsApi {
  /** Creates the group type's field in the caller's transaction; returns the attribute id. */
  abstract createGroupTypeField(spec: GroupTypeFieldSpec): Promise<number>;
  /** Renames it (the group type was renamed). */
  abstract renameGroupTypeField(groupTypeId: number, name: string): Promise<void>;
  /** Removes it (the group type was deleted). */
  abstract deleteGroupTypeField(groupTypeId: number): Promise<void>;
  abstract registerGroupTypeProviders(values: GroupTypeValuesProvider, choices: GroupTypeChoicesProvider): void;
}
