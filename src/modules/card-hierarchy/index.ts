export { CardHierarchyModule } from './card-hierarchy.module.js';
export {
  CardHierarchyApi,
  CARD_STATES,
  type CardAccess,
  type CardExtension,
  type CardState,
  type CardSummary,
  type CardView,
  type TeamCard,
} from './contracts/card-hierarchy.api.js';
