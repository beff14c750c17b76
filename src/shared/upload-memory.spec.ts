import { describe, expect, it } from '@jest/globals';
import { UploadMemoryBudget } from './upload-memory.js';

describe('UploadMemoryBudget', () => {
  it('lets holds take bytes up to the budget, and counts what it refuses', () => {
    const budget = new UploadMemoryBudget(100);
    const a = budget.hold();
    const b = budget.hold();
    expect(a.take(60)).toBe(true);
    expect(b.take(41)).toBe(false);
    expect(b.take(40)).toBe(true);
    expect(budget.inUse).toBe(100);
    expect(budget.refusals).toBe(1);
  });

  it('gives a hold\'s bytes back once, and refuses its takes after', () => {
    const budget = new UploadMemoryBudget(100);
    const a = budget.hold();
    a.take(30);
    a.take(20);
    a.release();
    a.release();
    expect(budget.inUse).toBe(0);
    expect(a.take(1)).toBe(false);
    expect(budget.inUse).toBe(0);
  });
});
