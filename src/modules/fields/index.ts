export { FieldsModule } from './fields.module.js';
