import { describe, expect, it } from '@jest/globals';
import { sniffDelimiter } from './csv-dialect.js';
import { SpreadsheetTooLargeError } from './import.errors.js';
import { columnLetters, SheetSummary, trimRow } from './sheet-summary.js';

const limits = { maxRows: 4, maxColumns: 3, maxCellChars: 10 };

describe('SheetSummary', () => {
  it('names columns from the first row and samples the rows below', () => {
    const s = new SheetSummary(limits);
    [['Title', '', 'Tags'], ['a', '1'], ['b', '', 'x'], ['a', '2', 'x']].forEach((r) => s.add(r));
    expect(s.rowCount).toBe(4);
    expect(s.fields()).toEqual([
      { column: 0, name: 'Title', samples: ['a', 'b'] },
      { column: 1, name: 'Column B', samples: ['1', '2'] },
      { column: 2, name: 'Tags', samples: ['x'] },
    ]);
  });

  it('names the cap a sheet passes', () => {
    const tooMany = (rows: string[][]) => () => {
      const s = new SheetSummary(limits);
      rows.forEach((r) => s.add(r));
    };
    expect(tooMany([['a'], ['b'], ['c'], ['d'], ['e']])).toThrow(/more than 4 rows \(limit set by IMPORT_MAX_ROWS\)/);
    expect(tooMany([['a', 'b', 'c', 'd']])).toThrow(/IMPORT_MAX_COLUMNS/);
    expect(tooMany([['a'], ['b', 'x'.repeat(11)]])).toThrow(/row 2, column 1 \(B\).*IMPORT_MAX_CELL_CHARS/);
    expect(tooMany([['a'], ['b', 'x'.repeat(11)]])).toThrow(SpreadsheetTooLargeError);
  });
});

describe('small helpers', () => {
  it('columnLetters', () => {
    expect([0, 25, 26, 27, 701, 702].map(columnLetters)).toEqual(['A', 'Z', 'AA', 'AB', 'ZZ', 'AAA']);
  });

  it('trimRow drops trailing empty cells only', () => {
    expect(trimRow(['', 'a', '', ''])).toEqual(['', 'a']);
    expect(trimRow(['', ''])).toEqual([]);
  });

  it('sniffDelimiter takes the commonest delimiter of the first line, outside quotes', () => {
    expect(sniffDelimiter('a;b;c\n1,2,3,4,5')).toBe(';');
    expect(sniffDelimiter('a\tb\n')).toBe('\t');
    expect(sniffDelimiter('"x;y;z",b\n')).toBe(',');
    expect(sniffDelimiter('single column')).toBe(',');
  });
});
