import { describe, expect, it } from '@jest/globals';
import { CardNotFoundError, InvalidCardInputError } from './card.errors.js';
import { deletionLocks, moveLocks, type TreePlace } from './tree-lock.policy.js';

// Card 7 at position 2 under 3, which is under the top-level card 1; card 20 under 1.
const places = new Map<number, TreePlace>([
  [7, { parentId: 3, position: 2, ancestorIds: [1, 3] }],
  [20, { parentId: 1, position: 0, ancestorIds: [1] }],
]);
const place = (id: number) => places.get(id);

describe('tree lock plans', () => {
  it('locks a deletion’s parent, subtree and later siblings', () => {
    expect(deletionLocks(7)(place)).toEqual({ ids: [3, 7], subtreeOf: 7, siblings: [{ parentId: 3, from: 3, to: null }] });
    expect(() => deletionLocks(8)(place)).toThrow(CardNotFoundError);
  });

  it('locks the card, its parent and the siblings a move passes under the same parent, and no ancestor above', () => {
    expect(moveLocks(7, 3, 0)(place)).toEqual({ ids: [7, 3], siblings: [{ parentId: 3, from: 0, to: 1 }] });
    expect(moveLocks(7, 3, 5)(place)).toEqual({ ids: [7, 3], siblings: [{ parentId: 3, from: 3, to: 5 }] });
    expect(moveLocks(7, 3, 2)(place).siblings).toEqual([]);
    expect(moveLocks(7, 3, undefined)(place).siblings).toEqual([]);
  });

  it('locks a move to another parent with its subtree, the gap it leaves and the one it opens, not the new parent\'s ancestors', () => {
    expect(moveLocks(7, 20, 1)(place)).toEqual({
      ids: [7, 3, 20],
      subtreeOf: 7,
      siblings: [
        { parentId: 3, from: 3, to: null },
        { parentId: 20, from: 1, to: null },
      ],
    });
    // Last among the new siblings: no gap opens.
    expect(moveLocks(7, 20, undefined)(place).siblings).toEqual([{ parentId: 3, from: 3, to: null }]);
    expect(() => moveLocks(7, 21, 0)(place)).toThrow(InvalidCardInputError);
    expect(() => moveLocks(8, 20, 0)(place)).toThrow(CardNotFoundError);
  });
});
