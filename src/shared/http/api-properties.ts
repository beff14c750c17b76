import { ApiProperty, type ApiPropertyOptions } from '@nestjs/swagger';

/** The largest id: ids are positive integers that fit in 53 bits (DESIGN.md §2). */
export const MAX_ID = Number.MAX_SAFE_INTEGER;

/** The schema of an id, for a schema written by hand (IdProperty is the decorator). */
export const ID_SCHEMA = { type: 'integer', minimum: 1, maximum: MAX_ID } as const;

/** An id in a response schema (or, `nullable`, a link that may be empty). */
export const IdProperty = (options: ApiPropertyOptions = {}): PropertyDecorator =>
  ApiProperty({ ...ID_SCHEMA, ...options } as ApiPropertyOptions);

/** A time in a response schema: ISO 8601 in UTC, as `Date.toISOString` writes it. */
export const TimeProperty = (options: ApiPropertyOptions = {}): PropertyDecorator =>
  ApiProperty({ type: 'string', format: 'date-time', description: 'ISO 8601, UTC', ...options } as ApiPropertyOptions);

/** A count or an index in a response schema. */
export const CountProperty = (options: ApiPropertyOptions = {}): PropertyDecorator =>
  ApiProperty({ type: 'integer', minimum: 0, ...options } as ApiPropertyOptions);

/** The names of the body schemas AtLeastOneProperty marks; documentInputs gives them `minProperties: 1`. */
export const AT_LEAST_ONE_PROPERTY = new Set<string>();

/**
 * A body whose properties are all optional but one at least must be given
 * (an update without any is a 400: "give a title and/or a state"). Swagger
 * takes no class-level schema keywords, so the schema is marked by name.
 */
export const AtLeastOneProperty = (): ClassDecorator => (target) => {
  AT_LEAST_ONE_PROPERTY.add(target.name);
};
