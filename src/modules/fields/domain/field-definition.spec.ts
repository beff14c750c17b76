import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { isFieldAvailable, MAX_NAME_LENGTH, sameName, validName, type FieldDefinition } from './field-definition.js';

describe('validName', () => {
  it('trims and keeps printable names up to the limit', () => {
    expect(validName('  Estimate ')).toBe('Estimate');
    expect(validName('Größe (cm) ✓')).toBe('Größe (cm) ✓');
    expect(validName('x'.repeat(MAX_NAME_LENGTH))).toHaveLength(MAX_NAME_LENGTH);
  });

  it.each([[''], ['   '], [5], [null], [undefined], [['a']], ['x'.repeat(MAX_NAME_LENGTH + 1)], ['tab\there'], ['nul\u0000'], ['\ud800']])(
    'refuses %j naming the property',
    (value) => {
      expect(() => validName(value, 'name')).toThrow(expect.objectContaining({ kind: 'invalid', errors: [expect.objectContaining({ field: 'name' })] }));
    },
  );

  it('is idempotent on what it accepts', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 50 }), (s) => {
        let name: string;
        try {
          name = validName(s);
        } catch {
          return;
        }
        expect(validName(name)).toBe(name);
        expect(name).toBe(name.trim());
      }),
    );
  });
});

describe('isFieldAvailable and sameName', () => {
  const f = (modelId: number | null) => ({ modelId }) as FieldDefinition;
  it('lets a card use project fields and its own model fields only', () => {
    expect(isFieldAvailable(f(null), null)).toBe(true);
    expect(isFieldAvailable(f(null), 3)).toBe(true);
    expect(isFieldAvailable(f(3), 3)).toBe(true);
    expect(isFieldAvailable(f(3), null)).toBe(false);
    expect(isFieldAvailable(f(3), 4)).toBe(false);
  });

  it('compares names without case', () => {
    expect(sameName('Estimate', 'ESTIMATE')).toBe(true);
    expect(sameName('Estimate', 'Estimates')).toBe(false);
  });
});
