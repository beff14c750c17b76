import { Injectable } from '@nestjs/common';
import type { CardExtension } from '../contracts/card-hierarchy.api.js';

/** The registered extensions (fields, grouping), in registration order. */
@Injectable()
export class CardExtensions {
  private readonly list: CardExtension[] = [];

  register(extension: CardExtension): void {
    if (this.list.some((e) => e.key === extension.key)) throw new Error(`card extension ${extension.key} registered twice`);
    this.list.push(extension);
  }

  all(): readonly CardExtension[] {
    return this.list;
  }

  /** The extension that accepts a creation (or relocation) key, if any. */
  forCreationKey(key: string): CardExtension | undefined {
    return this.list.find((e) => e.creationKeys?.includes(key));
  }

  forRelocationKey(key: string): CardExtension | undefined {
    return this.list.find((e) => e.relocationKeys?.includes(key));
  }
}
