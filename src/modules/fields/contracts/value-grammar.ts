/**
 * The field types (the importer says which a cell can fill), and the grammar
 * of field values that another module must read the same way: the filter
 * (`cards`) compares fields with values written as the fields take them (a
 * number, a day, a time of day), so it asks these rather than keep copies
 * that drift.
 */
export type { FieldType } from '../domain/values/field-value.types.js';
export { isDecimalNumber } from '../domain/values/number.parser.js';
export { daysInMonth, isCalendarDate } from '../domain/values/date.parser.js';
export { isTimeOfDay } from '../domain/values/time.parser.js';
