import { ApiProperty } from '@nestjs/swagger';
import { CountProperty, IdProperty, TimeProperty } from '../../../../shared/http/api-properties.js';

/** The group JSON of DESIGN.md §4. */
export class GroupDto {
  @IdProperty() id: number;
  @IdProperty() type_id: number;
  @ApiProperty() title: string;
  @IdProperty({ description: 'the card the group is scoped at (the top-level card: project-wide)' }) card_id: number;
  @CountProperty({ description: '0-based place among the groups of its type' }) position: number;
  @IdProperty() project_id: number;
  @TimeProperty() created_at: string;
}
