import { Injectable, type PipeTransform } from '@nestjs/common';
import { NotFoundError } from '../domain/domain-error.js';

/** A path id: anything but a positive integer names no resource, so 404. */
@Injectable()
export class ParseIdPipe implements PipeTransform<string, number> {
  transform(value: string): number {
    if (!/^[1-9]\d{0,14}$/.test(value)) throw new NotFoundError('Resource');
    return Number(value);
  }
}
