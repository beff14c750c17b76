import { ApiProperty, getSchemaPath } from '@nestjs/swagger';
import { CountProperty, IdProperty, TimeProperty } from '../../../../shared/http/api-properties.js';
import { CARD_STATES } from '../../../card-hierarchy/index.js';

/** A group the card is in, as the card JSON lists it. */
export class CardGroupDto {
  @IdProperty() id: number;
  @IdProperty() type_id: number;
  @ApiProperty() title: string;
  @CountProperty({ description: "the card's place in that group's column (0-based)" }) card_position: number;
}

/** The card JSON of DESIGN.md §4 (CardViewsService; listings write the same members). */
export class CardDto {
  @IdProperty() id: number;
  @CountProperty({ description: 'per-project number: 0 for the top-level card, then 1, 2, … in creation order' }) ref: number;
  @IdProperty() project_id: number;
  @IdProperty({ nullable: true, description: 'null for the top-level card' }) parent_id: number | null;
  @ApiProperty() title: string;
  @ApiProperty({ enum: [...CARD_STATES] }) state: string;
  @ApiProperty() is_archived: boolean;
  @CountProperty({ description: '0-based and dense among siblings' }) position: number;
  @CountProperty({ description: '0 for the top-level card' }) depth: number;
  @IdProperty({ nullable: true }) model_id: number | null;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description:
      'every field the card may use, by name: null when a single value is unset, [] for lists; members and relationships as lists of ids, ' +
      'files as [{id, name, size, mime_type, url}], likes as {score, votes}, a date period as {start, end}, a group_type field as its group ids (DESIGN.md §5)',
  })
  attributes: Record<string, unknown>;
  @ApiProperty({ type: [CardGroupDto] }) groups: CardGroupDto[];
  @TimeProperty() created_at: string;
  @TimeProperty() updated_at: string;
}

/** The group_type JSON of DESIGN.md §4. */
export class GroupTypeDto {
  @IdProperty() id: number;
  @IdProperty() project_id: number;
  @ApiProperty() name: string;
  @ApiProperty() one_group_per_card: boolean;
  @IdProperty({ description: 'the group_type field the type owns' }) attribute_id: number;
  @TimeProperty() created_at: string;
}

/** A card listing: the cards, or with `only_ids=true` their ids (anyOf: an empty page is both). */
export const CARD_LISTING_SCHEMA = {
  anyOf: [
    { type: 'array', items: { $ref: getSchemaPath(CardDto) } },
    { type: 'array', items: { type: 'integer', minimum: 1 }, description: 'with only_ids=true: the ids' },
  ],
};
