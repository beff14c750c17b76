/**
 * The grammar of field values that another module must read the same way:
 * the filter (`cards`) compares fields with values written as the fields
 * take them (a number, a day, a time of day), so it asks these rather than
 * keep copies that drift.
 */
export { isDecimalNumber } from '../domain/values/number.parser.js';
export { daysInMonth, isCalendarDate } from '../domain/values/date.parser.js';
export { isTimeOfDay } from '../domain/values/time.parser.js';
