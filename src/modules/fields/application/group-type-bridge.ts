import { Injectable } from '@nestjs/common';
import type { GroupTypeChoicesProvider, GroupTypeValuesProvider } from '../contracts/fields.api.js';

/**
 * Grouping owns group memberships; it hands fields the functions that read
 * them (fields does not depend on grouping). Until it registers, group_type
 * fields show no groups and offer no choices.
 */
@Injectable()
export class GroupTypeBridge {
  private valuesProvider: GroupTypeValuesProvider = async () => new Map();
  private choicesProvider: GroupTypeChoicesProvider = async () => [];

  register(values: GroupTypeValuesProvider, choices: GroupTypeChoicesProvider): void {
    this.valuesProvider = values;
    this.choicesProvider = choices;
  }

  values(cardIds: number[], groupTypeIds: number[]): Promise<Map<number, Map<number, number[]>>> {
    if (!cardIds.length || !groupTypeIds.length) return Promise.resolve(new Map());
    return this.valuesProvider(cardIds, groupTypeIds);
  }

  choices(groupTypeId: number, cardId: number): Promise<Array<[number, string]>> {
    return this.choicesProvider(groupTypeId, cardId);
  }
}
