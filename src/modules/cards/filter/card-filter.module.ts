import { Module } from '@nestjs/common';
import { CardHierarchyModule } from '../../card-hierarchy/index.js';
import { FieldsModule } from '../../fields/index.js';
import { GroupingModule } from '../../grouping/index.js';
import { IdentityModule } from '../../identity/index.js';
import { CardFilterService } from './card-filter.service.js';

/** The filter language (docs/FILTERS.md): parser, resolver and the compiler over the modules' SQL parts. */
@Module({
  imports: [IdentityModule, CardHierarchyModule, FieldsModule, GroupingModule],
  providers: [CardFilterService],
  exports: [CardFilterService],
})
export class CardFilterModule {}
