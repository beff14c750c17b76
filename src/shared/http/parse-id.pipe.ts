import { Injectable, type PipeTransform } from '@nestjs/common';
import { NotFoundError } from '../domain/domain-error.js';
import { idFromText } from '../domain/ids.js';

/**
 * A path id is a plain decimal positive integer that fits in 53 bits (DESIGN.md
 * §2, idFromText, as an id in a body). Anything else (`0`, `-1`, `0x10`, `1e3`,
 * ` 5`, `5.0`, `05`) names no resource: 404.
 */
@Injectable()
export class ParseIdPipe implements PipeTransform<unknown, number> {
  transform(value: unknown): number {
    const id = typeof value === 'string' ? idFromText(value) : undefined;
    if (id === undefined) throw new NotFoundError('Resource');
    return id;
  }
}
