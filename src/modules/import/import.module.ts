import { Module } from '@nestjs/common';
import { CardHierarchyModule } from '../card-hierarchy/index.js';

/** Shell: the import capability is built in its own issue. */
@Module({ imports: [CardHierarchyModule] })
export class ImportModule {}
