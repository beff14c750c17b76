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
} from './contracts/cards.api.js';
