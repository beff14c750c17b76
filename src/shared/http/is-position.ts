import { ValidateBy, type ValidationOptions } from 'class-validator';
import { POSITION_MESSAGE } from '../domain/positions.js';

/** A position in a request body (`requestedPosition`): a safe integer, clamped by the service; one 400 message for anything else. */
export function IsPosition(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isPosition',
      validator: {
        validate: (value: unknown) => Number.isSafeInteger(value),
        defaultMessage: () => `$property ${POSITION_MESSAGE}`,
      },
    },
    options,
  );
}
