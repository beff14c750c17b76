import { describe, expect, it } from '@jest/globals';
import type { CardHierarchyApi, CardRecord } from '../../card-hierarchy/index.js';
import type { FieldsApi } from '../../fields/index.js';
import type { CardMembershipInfo, GroupingApi } from '../../grouping/index.js';
import { CardViewsService, CHILDREN_PART, nextPartSize, PART_CHARS } from './card-views.service.js';

const card: CardRecord = {
  id: 7,
  ref: 1,
  projectId: 1,
  organizationId: 1,
  parentId: 1,
  ancestorIds: [1],
  depth: 1,
  title: 'In many groups',
  state: 'undecided',
  isArchived: false,
  modelId: null,
  position: 0,
  createdAt: new Date(0),
  updatedAt: new Date(0),
};

/** A card in `count` groups of three types (as three context columns of an import make it). */
function viewsOfCardIn(count: number): CardViewsService {
  const memberships: CardMembershipInfo[] = Array.from({ length: count }, (_, i) => ({
    cardId: card.id,
    groupId: i + 1,
    typeId: (i % 3) + 1,
    title: `Group ${i + 1}`,
    position: 0,
  }));
  const fields = {
    attributesOf: () =>
      Promise.resolve({
        byCard: new Map([[card.id, {}]]),
        groupTypeFields: [1, 2, 3].map((t) => ({ attributeId: t, projectId: 1, name: `Type ${t}`, groupTypeId: t })),
      }),
  } as unknown as FieldsApi;
  const grouping = { membershipsRead: () => memberships } as unknown as GroupingApi;
  return new CardViewsService({} as CardHierarchyApi, fields, grouping);
}

describe('CardViewsService', () => {
  // Copying a card's list of groups on each membership took 28-32 s for a
  // card in 30 000 groups; 40 000 take 17 s, appending takes
  // milliseconds: the timeout is the guard.
  it('shows a card in 40 000 groups in linear time', async () => {
    const [view] = await viewsOfCardIn(40_000).many([card], [], { values: [], memberships: [] });
    expect(view.groups).toHaveLength(40_000);
    expect(view.groups[39_999]).toEqual({ id: 40_000, type_id: 1, title: 'Group 40000', card_position: 0 });
    expect(view.attributes['Type 1']).toHaveLength(13_334);
    expect((view.attributes['Type 2'] as number[]).slice(0, 2)).toEqual([2, 5]);
  }, 3_000);
});

describe('nextPartSize', () => {
  it('reads up to CHILDREN_PART light cards at a time, and fewer heavy ones, at least one', () => {
    expect(nextPartSize(500, 500 * 300)).toBe(CHILDREN_PART);
    // 40 KB a card (1 004 fields, two texts of 10 000 characters): about 200 a part.
    expect(nextPartSize(500, 500 * 40_000)).toBe(Math.floor(PART_CHARS / 40_000));
    expect(nextPartSize(10, 10 * PART_CHARS)).toBe(1);
    expect(nextPartSize(3, 0)).toBe(CHILDREN_PART);
  });
});
