/** A kind of grouping in a project (columns, labels); its `group_type` field is the fields module's. */
export class GroupType {
  id: number;

  projectId: number;

  organizationId: number;

  name: string;

  oneGroupPerCard: boolean;

  createdBy: number | null;

  createdAt: Date;

  /** Whether a card already in `currentGroupIds` of this type may also join `groupId`. */
  mayAlsoJoin(groupId: number, currentGroupIds: number[]): boolean {
    return !this.oneGroupPerCard || currentGroupIds.every((id) => id === groupId);
  }
}
