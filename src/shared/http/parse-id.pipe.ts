import { Injectable, type PipeTransform } from '@nestjs/common';
import { NotFoundError } from '../domain/domain-error.js';

/**
 * A path id is a plain decimal positive integer that fits in 53 bits (DESIGN.md
 * §2). Anything else (`0`, `-1`, `0x10`, `1e3`, ` 5`, `5.0`) names no resource: 404.
 */
@Injectable()
export class ParseIdPipe implements PipeTransform<unknown, number> {
  transform(value: unknown): number {
    if (typeof value !== 'string' || !/^[1-9]\d{0,15}$/.test(value) || !Number.isSafeInteger(Number(value))) {
      throw new NotFoundError('Resource');
    }
    return Number(value);
  }
}
