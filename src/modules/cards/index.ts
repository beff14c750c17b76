export { CardsModule } from './cards.module.js';
export {
  CardsApi,
  type BatchSequence,
  type CardGroupView,
  type CardView,
  type CreateCardInput,
  type CreatedCard,
  type GroupTypeView,
  type GroupTypeWithField,
  type NewCard,
  type PreparedCards,
  type PreparedCardsOptions,
  type ReadyBatch,
  type SentBatch,
} from './contracts/cards.api.js';
