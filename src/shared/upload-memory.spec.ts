import { describe, expect, it } from '@jest/globals';
import { clientAddress, UploadMemoryBudget } from './upload-memory.js';

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

describe('UploadMemoryBudget: one user\'s share', () => {
  it('refuses a user past their share (429), others go on, and a full budget is a 503 first', () => {
    const budget = new UploadMemoryBudget(100, 40);
    const ann = [budget.hold(1), budget.hold(1)];
    expect(ann[0].take(30)).toBe(true);
    expect(ann[1].take(11)).toBe(false);
    expect(ann[1].refusal()).toMatchObject({ code: 'RATE.CONCURRENT_UPLOADS', kind: 'rate_limited', retryAfterSeconds: 5 });
    expect(ann[1].take(10)).toBe(true);
    expect(budget.inUseBy(1)).toBe(40);
    const bob = budget.hold(2);
    expect(bob.take(40)).toBe(true);
    const nobody = budget.hold();
    expect(nobody.take(21)).toBe(false);
    expect(nobody.refusal()).toMatchObject({ code: 'SERVICE.BUSY', kind: 'unavailable' });
    expect(nobody.take(20)).toBe(true);
    // the process is full: that is the answer, even past a share
    expect(ann[0].take(1)).toBe(false);
    expect(ann[0].refusal()).toMatchObject({ code: 'SERVICE.BUSY' });
    expect(budget.refusals).toBe(3);
    ann.forEach((h) => h.release());
    expect(budget.inUseBy(1)).toBe(0);
    expect(budget.inUse).toBe(60);
  });

  it("holds a client address's bodies to the same share, apart from its users' holds, refused as RATE.CONCURRENT_BODIES", () => {
    const budget = new UploadMemoryBudget(100, 40);
    const address = budget.hold(clientAddress('192.0.2.1'));
    expect(address.take(40)).toBe(true);
    const more = budget.hold(clientAddress('192.0.2.1'));
    expect(more.take(1)).toBe(false);
    expect(more.refusal()).toMatchObject({ code: 'RATE.CONCURRENT_BODIES', kind: 'rate_limited', retryAfterSeconds: 5 });
    expect(budget.hold(clientAddress('192.0.2.2')).take(40)).toBe(true);
    expect(budget.hold(1).take(20)).toBe(true);
    address.release();
    expect(budget.inUseBy(clientAddress('192.0.2.1'))).toBe(0);
  });
});
