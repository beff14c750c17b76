import { ValidateBy, type ValidationOptions } from 'class-validator';
import { POSITION_MESSAGE, requestedPosition } from '../domain/positions.js';

/** A position in a request body (`requestedPosition`): any integer, clamped by the service; one 400 message for anything else. */
export function IsPosition(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isPosition',
      validator: {
        validate: (value: unknown) => value !== undefined && value !== null && !Number.isNaN(requestedPosition(value)),
        defaultMessage: () => `$property ${POSITION_MESSAGE}`,
      },
    },
    options,
  );
}
