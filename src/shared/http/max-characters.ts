import { ValidateBy, type ValidationOptions } from 'class-validator';
import { longerThan } from '../domain/safe-text.js';

/**
 * class-validator's MaxLength, counting characters as the domain's limits do
 * (`longerThan`: code points). MaxLength's own count leaves out emoji
 * presentation selectors, so a DTO and the service behind it would disagree
 * on what "1024 characters" holds.
 */
export function MaxCharacters(max: number, options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'maxCharacters',
      constraints: [max],
      validator: {
        validate: (value: unknown) => typeof value === 'string' && !longerThan(value, max),
        defaultMessage: () => `$property must be shorter than or equal to ${max} characters`,
      },
    },
    options,
  );
}
