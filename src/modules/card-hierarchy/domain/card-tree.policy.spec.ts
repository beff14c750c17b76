import { describe, expect, it } from '@jest/globals';
import { assertNoCycle, assertNotTopLevel, isCardState, targetPosition } from './card-tree.policy.js';
import { CardCycleError, TopLevelCardError } from './card.errors.js';

describe('card tree policy', () => {
  it('refuses moving a card under itself or a descendant', () => {
    expect(() => assertNoCycle(5, 5, [1])).toThrow(CardCycleError);
    expect(() => assertNoCycle(5, 9, [1, 5, 7])).toThrow(CardCycleError);
    expect(() => assertNoCycle(5, 9, [1, 7])).not.toThrow();
  });
  it('protects the top-level card', () => {
    expect(() => assertNotTopLevel({ parentId: null }, 'deleted')).toThrow(TopLevelCardError);
    expect(() => assertNotTopLevel({ parentId: 3 }, 'deleted')).not.toThrow();
  });
  it('knows the seven states only', () => {
    expect(isCardState('in_progress')).toBe(true);
    expect(isCardState('done')).toBe(false);
    expect(isCardState(3)).toBe(false);
  });
  it('clamps positions and defaults to last', () => {
    expect(targetPosition(undefined, 4)).toBe(4);
    expect(targetPosition(-3, 4)).toBe(0);
    expect(targetPosition(99, 4)).toBe(4);
    expect(targetPosition(2, 4)).toBe(2);
  });
});
