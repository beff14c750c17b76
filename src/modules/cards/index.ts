export { CardsModule } from './cards.module.js';
export {
  CardsApi,
  type CardGroupView,
  type CardView,
  type CreateCardInput,
  type CreatedCard,
  type GroupTypeView,
  type GroupTypeWithField,
  type NewCard,
  type PreparedCards,
} from './contracts/cards.api.js';
