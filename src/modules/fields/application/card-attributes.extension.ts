import { Injectable, type OnModuleInit } from '@nestjs/common';
import { CardHierarchyApi } from '../../card-hierarchy/index.js';
import { AttributeValuesReader } from './attribute-values.reader.js';
import { CardValuesService } from './card-values.service.js';

/** Adds `attributes` to the card JSON and to card creation (POST /cards/{parent}/children). */
@Injectable()
export class CardAttributesExtension implements OnModuleInit {
  constructor(
    private readonly cards: CardHierarchyApi,
    private readonly reader: AttributeValuesReader,
    private readonly values: CardValuesService,
  ) {}

  onModuleInit(): void {
    this.cards.registerExtension({
      key: 'attributes',
      view: (cards) => this.reader.attributesOf(cards),
      creationKeys: ['attributes'],
      onCreate: (card, input, actor) => this.values.applyOnCreate(card, input.attributes, actor),
    });
  }
}
