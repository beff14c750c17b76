import { ValidationPipe, type ValidationError } from '@nestjs/common';
import { InvalidInputError, type FieldProblem } from '../domain/domain-error.js';

function flatten(errors: ValidationError[], prefix = ''): FieldProblem[] {
  return errors.flatMap((e) => {
    const field = prefix ? `${prefix}.${e.property}` : e.property;
    const own = Object.values(e.constraints ?? {}).map((message) => ({ field, message }));
    return [...own, ...flatten(e.children ?? [], field)];
  });
}

/** One validation style for the whole API: whitelist + forbidNonWhitelisted. */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    forbidUnknownValues: false,
    exceptionFactory: (errors) => {
      const problems = flatten(errors);
      const detail = problems.map((p) => `${p.field}: ${p.message}`).join('; ') || 'Invalid input';
      return new InvalidInputError(detail, problems);
    },
  });
}
