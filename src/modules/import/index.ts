export { ImportModule } from './import.module.js';
