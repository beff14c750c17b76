export { FieldsModule } from './fields.module.js';
export {
  FieldsApi,
  type CardAttributes,
  type Choice,
  type FieldCardRef,
  type FieldChoices,
  type FieldInfo,
  type ModelInfo,
  type ParsedFieldValue,
  type GroupTypeFieldRef,
  type GroupTypeFieldSpec,
  type PreparedValues,
  type UploadedFile,
} from './contracts/fields.api.js';
