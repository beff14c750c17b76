import { ValidationPipe, type ArgumentMetadata, type ValidationError } from '@nestjs/common';
import { InvalidInputError, type FieldProblem } from '../domain/domain-error.js';

function flatten(errors: ValidationError[], prefix = ''): FieldProblem[] {
  return errors.flatMap((e) => {
    const field = prefix ? `${prefix}.${e.property}` : e.property;
    const own = Object.values(e.constraints ?? {}).map((message) => ({ field, message }));
    return [...own, ...flatten(e.children ?? [], field)];
  });
}

/**
 * Nest's pipe turns a path or query primitive declared `number` into one with
 * `+value`, so `/cards/0x10`, `/cards/1e1` and `/cards/ 16` reached the id pipe
 * as 16 (issue 13). Primitives stay the strings they came as: ParseIdPipe and
 * the pagination reader decide what a well-formed number is (DESIGN.md §2).
 */
class NoCoercionValidationPipe extends ValidationPipe {
  protected override transformPrimitive(value: unknown, _metadata: ArgumentMetadata): unknown {
    return value;
  }
}

/** One validation style for the whole API: whitelist + forbidNonWhitelisted. */
export function createValidationPipe(): ValidationPipe {
  return new NoCoercionValidationPipe({
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
