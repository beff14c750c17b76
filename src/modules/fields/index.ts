export { FieldsModule } from './fields.module.js';
export {
  FieldsApi,
  type GroupTypeChoicesProvider,
  type GroupTypeFieldSpec,
  type GroupTypeValuesProvider,
} from './contracts/fields.api.js';
