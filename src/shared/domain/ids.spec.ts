import { describe, expect, it } from '@jest/globals';
import { idFrom } from './ids.js';
import { MAX_POSITION, POSITION_MESSAGE, readPosition } from './positions.js';

describe('idFrom (a parent, group or type id, a user in a team)', () => {
  it('takes positive safe integers and their decimal strings', () => {
    expect([1, '1', 42, '42', Number.MAX_SAFE_INTEGER, '999999999999999', '1234567890123456', String(Number.MAX_SAFE_INTEGER)].map(idFrom)).toEqual([
      1, 1, 42, 42, Number.MAX_SAFE_INTEGER, 999999999999999, 1234567890123456, Number.MAX_SAFE_INTEGER,
    ]);
  });

  it('refuses the rest', () => {
    for (const v of [0, '0', -1, '-1', 1.5, '1.5', '01', '007', ' 1', '1e3', '9007199254740992', 2 ** 53, NaN, null, undefined, true, [1], {}]) {
      expect([v, idFrom(v)]).toEqual([v, undefined]);
    }
  });
});

describe('readPosition', () => {
  const refusal = (message: string) => new Error(message);

  it('brings integers into range and leaves an absent one undefined', () => {
    expect([-5, '3', 2 ** 40, null, undefined].map((v) => readPosition(v, refusal))).toEqual([0, 3, MAX_POSITION, undefined, undefined]);
  });

  it('brings every integer into range, however large, as a number or as digits', () => {
    const huge = [1e20, 2 ** 53 + 2, 1e308, Infinity, '9007199254740993', '1'.repeat(400)];
    const hugeNegative = [-1e20, -9007199254740993, -Infinity, '-9007199254740993', `-${'1'.repeat(400)}`, '-0'];
    expect(huge.map((v) => readPosition(v, refusal))).toEqual(huge.map(() => MAX_POSITION));
    expect(hugeNegative.map((v) => readPosition(v, refusal))).toEqual(hugeNegative.map(() => 0));
  });

  it("throws the caller's refusal of anything else", () => {
    for (const v of [0.5, -1.5, NaN, '1e20', '1.0', ' 1', '', true, [1], {}]) expect(() => readPosition(v, refusal)).toThrow(POSITION_MESSAGE);
    expect(() => readPosition('first', refusal)).toThrow(POSITION_MESSAGE);
    expect(() => readPosition(1.5, refusal)).toThrow(POSITION_MESSAGE);
  });
});
