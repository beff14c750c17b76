import { describe, expect, it } from '@jest/globals';
import { findByName, foldCase, lowerCase, sameNamed } from './fold-case.js';

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

  it('finds the exact name, else the one lower() folds as it does, before another only foldCase folds as it does', () => {
    const fields = [{ name: 'ΟΔΟΣ' }, { name: 'οδος' }, { name: 'item' }];
    expect(findByName(fields, 'οδος', (f) => f.name)).toBe(fields[1]);
    expect(findByName(fields, 'ΟΔΟΣ', (f) => f.name)).toBe(fields[0]);
    // lower(): 'οδος', the second's; 'οδοσ', the first's.
    expect(findByName(fields, 'Οδος', (f) => f.name)).toBe(fields[1]);
    expect(findByName(fields, 'οδοσ', (f) => f.name)).toBe(fields[0]);
    expect(findByName([fields[0]], 'οδος', (f) => f.name)).toBe(fields[0]);
    expect(findByName(fields, 'İTEM', (f) => f.name)).toBe(fields[2]);
    expect(findByName(fields, 'other', (f) => f.name)).toBeUndefined();
  });

  it('lowerCase folds as PostgreSQL lower() does, one character at a time', () => {
    expect(lowerCase('ΟΔΟΣ')).toBe('οδοσ');
    expect(lowerCase('οδος')).toBe('οδος');
    expect(lowerCase('İTEM')).toBe('item');
    expect(lowerCase('STRAẞE')).toBe('straße');
  });

  it('sameNamed gives every item lower() folds as the name, else every one foldCase folds as it, else none', () => {
    const names = ['ΟΔΟΣ', 'οδος', 'Risk', 'RISK'];
    const named = (name: string, items = names) => sameNamed(items, name, (n) => n);
    expect(named('ΟΔΟΣ')).toEqual(['ΟΔΟΣ']);
    expect(named('οδος')).toEqual(['οδος']);
    expect(named('risk')).toEqual(['Risk', 'RISK']);
    expect(named('ΟΔΟΣ', ['οδος'])).toEqual(['οδος']);
    expect(named('other')).toEqual([]);
  });
});
