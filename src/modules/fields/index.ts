export { FieldsModule } from './fields.module.js';
export {
  FieldsApi,
  type BulkValueOptions,
  type CardAttributes,
  type Choice,
  type FieldCardRef,
  type FieldChoices,
  type FieldInfo,
  type ModelInfo,
  type NewValuesAlong,
  type ParsedFieldValue,
  type GroupTypeFieldRef,
  type GroupTypeFieldSpec,
  type PreparedValues,
  type ProjectFields,
  type UploadedFile,
  type PlannedValues,
  type ValueSetRequest,
  type ValuesAlong,
} from './contracts/fields.api.js';
export {
  FieldFilterApi,
  type FieldTerm,
  type FilterField,
  type FilterFieldRef,
  type FilterModel,
  type FilterSchema,
} from './contracts/field-filter.api.js';
export { daysInMonth, isCalendarDate, isDecimalNumber, isTimeOfDay, type FieldType } from './contracts/value-grammar.js';
