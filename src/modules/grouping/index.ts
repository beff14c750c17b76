export { GroupingModule } from './grouping.module.js';
export { GroupingApi, type GroupInfo, type GroupTypeInfo } from './contracts/grouping.api.js';
