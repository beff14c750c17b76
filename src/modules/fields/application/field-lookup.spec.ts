import { describe, expect, it } from '@jest/globals';
import type { FieldDefinition } from '../domain/field-definition.js';
import { lookupField, requireBodyField } from './field-lookup.js';

const field = (id: number, name: string, modelId: number | null = null): FieldDefinition => ({
  id,
  projectId: 1,
  modelId,
  name,
  type: 'text',
  options: {},
  groupTypeId: null,
});

const fields = [field(1, 'Estimate'), field(2, 'Severity', 10), field(3, 'Severity', 20), field(4, '7'), field(7, 'Seven'), field(8, '2024')];

describe('lookupField', () => {
  it('prefers an id, then the exact name, then the name in any case', () => {
    expect(lookupField(fields, null, 'Estimate')).toEqual({ field: fields[0] });
    // Field 7 keeps its id even though field 4 is named "7"; "2024" is no field's id.
    expect(lookupField(fields, null, '7')).toEqual({ field: fields[4] });
    expect(lookupField(fields, null, '2024')).toEqual({ field: fields[5] });
    expect(lookupField(fields, null, '1')).toEqual({ field: fields[0] });
    expect(lookupField(fields, null, 'ESTIMATE')).toEqual({ field: fields[0] });
  });

  it("shows the card's model fields and reports other models' fields as unavailable", () => {
    expect(lookupField(fields, 20, 'Severity')).toEqual({ field: fields[2] });
    expect(lookupField(fields, 10, 'severity')).toEqual({ field: fields[1] });
    expect(lookupField(fields, null, 'Severity')).toEqual({ unavailable: fields[1] });
    expect(lookupField(fields, 10, '3')).toEqual({ unavailable: fields[2] });
  });

  it('finds nothing for unknown names and ids', () => {
    expect(lookupField(fields, null, 'Nope')).toBeNull();
    expect(lookupField(fields, null, '99')).toBeNull();
    expect(lookupField(fields, null, '01')).toBeNull();
  });

  it('turns misses into 400s naming the property', () => {
    expect(() => requireBodyField(fields, null, 'Nope', 'attributes.Nope')).toThrow(
      expect.objectContaining({ kind: 'invalid', errors: [expect.objectContaining({ field: 'attributes.Nope' })] }),
    );
    expect(() => requireBodyField(fields, null, 'Severity', 'Severity')).toThrow(
      expect.objectContaining({ code: 'FIELDS.ATTRIBUTE_NOT_AVAILABLE' }),
    );
  });
});
