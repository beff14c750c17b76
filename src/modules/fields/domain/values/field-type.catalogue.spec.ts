import { describe, expect, it } from '@jest/globals';
import { InvalidInputError } from '../../../../shared/domain/domain-error.js';
import { FIELD_TYPES } from './field-value.types.js';
import { emptyValue, fieldTypeCatalogue, isFieldType, isMultiValued, validateFieldOptions } from './field-type.catalogue.js';

describe('field type catalogue', () => {
  it('lists every type once with a label', () => {
    const catalogue = fieldTypeCatalogue();
    expect(catalogue.map((t) => t.type)).toEqual([...FIELD_TYPES]);
    expect(catalogue.find((t) => t.type === 'date')).toEqual({
      type: 'date',
      label: 'Date',
      options: { time: 'boolean', period: 'boolean' },
    });
    expect(catalogue.find((t) => t.type === 'group_type')?.label).toBe('Labels / Multiple choice');
    expect(catalogue.find((t) => t.type === 'content')?.label).toBe('Content (markdown)');
    expect(catalogue.every((t) => t.label.length > 0)).toBe(true);
  });

  it('hands out copies', () => {
    const first = fieldTypeCatalogue();
    first[4].options.time = 'boolean';
    delete first[4].options.period;
    expect(fieldTypeCatalogue()[4].options).toEqual({ time: 'boolean', period: 'boolean' });
  });

  it('knows the multi-valued types and their empty value', () => {
    expect(FIELD_TYPES.filter(isMultiValued)).toEqual(['members', 'relationships', 'files']);
    expect(emptyValue('members')).toEqual([]);
    expect(emptyValue('files')).toEqual([]);
    expect(emptyValue('text')).toBeNull();
    expect(emptyValue('date')).toBeNull();
    expect(isFieldType('date')).toBe(true);
    expect(isFieldType('Date')).toBe(false);
    expect(isFieldType('toString')).toBe(false);
  });
});

describe('validateFieldOptions', () => {
  it('keeps the options that are set', () => {
    expect(validateFieldOptions('date', { time: true, period: false })).toEqual({ time: true, period: false });
    expect(validateFieldOptions('date', { time: null })).toEqual({});
    expect(validateFieldOptions('date', undefined)).toEqual({});
    expect(validateFieldOptions('text', {})).toEqual({});
    expect(validateFieldOptions('text', null)).toEqual({});
  });

  it('refuses unknown keys, options on types without any, and non-booleans', () => {
    const cases: [Parameters<typeof validateFieldOptions>[0], unknown, RegExp][] = [
      ['date', { zone: true }, /unknown option zone/],
      ['text', { time: true }, /takes no options/],
      ['date', { time: 'yes' }, /options\.time: expected a boolean/],
      ['date', { period: 1 }, /expected a boolean/],
      ['date', [true], /expected an object/],
      ['date', 'time', /expected an object/],
      ['date', { __proto__: null, toString: true }, /unknown option toString/],
    ];
    for (const [type, options, message] of cases) {
      expect(() => validateFieldOptions(type, options)).toThrow(InvalidInputError);
      expect(() => validateFieldOptions(type, options)).toThrow(message);
    }
  });

  it('names the given property in errors', () => {
    try {
      validateFieldOptions('date', { time: 'x' }, 'attribute.options');
      throw new Error('not refused');
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidInputError);
      expect((error as InvalidInputError).errors).toEqual([{ field: 'attribute.options.time', message: 'expected a boolean' }]);
    }
  });
});
