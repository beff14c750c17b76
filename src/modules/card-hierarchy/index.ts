export { CardHierarchyModule } from './card-hierarchy.module.js';
export {
  CardHierarchyApi,
  CARD_STATES,
  type CardAccess,
  type CardChanges,
  type CardJsonRow,
  type CardRecord,
  type CardState,
  type CardSummary,
  type ChildCreations,
  type CreateChildOptions,
  type CreationAlong,
  type CreatedChild,
  type DoomedSubtree,
  type MovedCard,
  type PreparedMove,
  type ProjectCardCounters,
  type ProjectListing,
  type ProjectPage,
  type ReadyCreation,
  type SentCreation,
  type TeamCard,
  type TouchAlong,
  type TouchedCard,
  type TreeMove,
} from './contracts/card-hierarchy.api.js';
export { CardFilterApi, type CandidateSet, type CardTerm, type FilterCondition, type FilterScope, type PageStart } from './contracts/card-filter.api.js';
export { ProjectCardLocks } from './contracts/project-card-locks.api.js';
