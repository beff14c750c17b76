export { GroupingModule } from './grouping.module.js';
