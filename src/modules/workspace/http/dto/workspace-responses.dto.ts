import { ApiProperty } from '@nestjs/swagger';
import { IdProperty, TimeProperty } from '../../../../shared/http/api-properties.js';
import { ROLES } from '../../domain/membership.entity.js';

/** The organization (team) JSON of DESIGN.md §4. */
export class OrganizationDto {
  @IdProperty() id: number;
  @ApiProperty() name: string;
  @ApiProperty({ enum: [...ROLES], description: "the caller's role in the team" }) role: string;
  @TimeProperty() created_at: string;
}

/** A member entry of DESIGN.md §4 (the membership has no id of its own). */
export class MemberDto {
  @IdProperty() user_id: number;
  @ApiProperty() username: string;
  @ApiProperty({ enum: [...ROLES] }) role: string;
}

/** The project JSON of DESIGN.md §4. */
export class ProjectDto {
  @IdProperty() id: number;
  @IdProperty() organization_id: number;
  @ApiProperty() title: string;
  @IdProperty({ description: 'the project card, from which the hierarchy starts' }) top_level_card_id: number;
  @TimeProperty() created_at: string;
}
