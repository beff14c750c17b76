import { Module } from '@nestjs/common';
import { CardsModule } from '../cards/index.js';

/** Shell: the import capability is built in its own issue. */
@Module({ imports: [CardsModule] })
export class ImportModule {}
