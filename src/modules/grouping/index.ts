export { GroupingModule } from './grouping.module.js';
export {
  GroupingApi,
  type CardMembershipInfo,
  type GroupInfo,
  type GroupTypeChanges,
  type GroupTypeInfo,
  type NewCardGroups,
} from './contracts/grouping.api.js';
export { GroupFilterApi, type GroupTerm } from './contracts/group-filter.api.js';
