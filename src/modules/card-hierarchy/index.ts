export { CardHierarchyModule } from './card-hierarchy.module.js';
export {
  CardHierarchyApi,
  CARD_STATES,
  type CardAccess,
  type CardExtension,
  type CardState,
  type CardSummary,
  type CardView,
} from './contracts/card-hierarchy.api.js';
