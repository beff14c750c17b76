import { Injectable } from '@nestjs/common';
import {
  FieldsApi,
  type GroupTypeChoicesProvider,
  type GroupTypeFieldSpec,
  type GroupTypeValuesProvider,
} from '../contracts/fields.api.js';
import { FieldDefinitionsService } from './field-definitions.service.js';
import { GroupTypeBridge } from './group-type-bridge.js';

@Injectable()
export class FieldsApiImpl extends FieldsApi {
  constructor(
    private readonly definitions: FieldDefinitionsService,
    private readonly bridge: GroupTypeBridge,
  ) {
    super();
  }

  createGroupTypeField(spec: GroupTypeFieldSpec): Promise<number> {
    return this.definitions.createGroupTypeField(spec.projectId, spec.groupTypeId, spec.name);
  }

  renameGroupTypeField(groupTypeId: number, name: string): Promise<void> {
    return this.definitions.renameGroupTypeField(groupTypeId, name);
  }

  deleteGroupTypeField(groupTypeId: number): Promise<void> {
    return this.definitions.deleteGroupTypeField(groupTypeId);
  }

  registerGroupTypeProviders(values: GroupTypeValuesProvider, choices: GroupTypeChoicesProvider): void {
    this.bridge.register(values, choices);
  }
}
