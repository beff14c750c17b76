import { describe, expect, it } from '@jest/globals';
import { findByName, foldCase } from './fold-case.js';

describe('foldCase', () => {
  it('holds for the same what either PostgreSQL lower() (libc: one character at a time) or JavaScript toLowerCase() holds for the same', () => {
    // 'İ': 'i' to the database, 'i̇' to JavaScript; a final 'Σ': 'σ' to the database, 'ς' to JavaScript.
    expect('İTEM'.toLowerCase()).not.toBe('item');
    expect(foldCase('İTEM')).toBe(foldCase('item'));
    expect(foldCase('İstanbul')).toBe(foldCase('istanbul'));
    expect('ΟΔΟΣ'.toLowerCase()).toBe('οδος');
    expect(foldCase('ΟΔΟΣ')).toBe(foldCase('οδος'));
    expect(foldCase('ΟΔΟΣ')).toBe(foldCase('οδοσ'));
    expect(foldCase('Straße')).toBe(foldCase('STRAẞE'));
    expect(foldCase('Élan')).toBe('élan');
    expect(foldCase('Doing')).not.toBe(foldCase('Done'));
  });

  it('finds the exact name before another that folds as it does', () => {
    const fields = [{ name: 'ΟΔΟΣ' }, { name: 'οδος' }, { name: 'item' }];
    expect(findByName(fields, 'οδος', (f) => f.name)).toBe(fields[1]);
    expect(findByName(fields, 'ΟΔΟΣ', (f) => f.name)).toBe(fields[0]);
    expect(findByName(fields, 'Οδος', (f) => f.name)).toBe(fields[0]);
    expect(findByName(fields, 'İTEM', (f) => f.name)).toBe(fields[2]);
    expect(findByName(fields, 'other', (f) => f.name)).toBeUndefined();
  });
});
