import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { AtLeastOneProperty } from '../../../../shared/http/api-properties.js';
import { IsInt, IsNotEmpty, IsOptional, IsString, Min } from 'class-validator';
import { formId, formInt } from '../../../../shared/http/form-values.js';
import { MaxCharacters } from '../../../../shared/http/max-characters.js';
import { IsPosition } from '../../../../shared/http/is-position.js';
import { POSITION_DESCRIPTION } from '../../../../shared/domain/positions.js';

export class CreateGroupDto {
  @ApiProperty({ type: 'integer', description: 'group type (of the card’s project)' })
  @Transform(formId)
  @IsInt()
  @Min(1)
  type_id: number;

  @ApiProperty({ maxLength: 1024, description: 'unique (any case) among the groups of this type scoped at the card' })
  @IsString()
  @IsNotEmpty()
  @MaxCharacters(1024)
  title: string;

  @ApiPropertyOptional({ type: 'integer', description: `place among the groups of this type and scope; default last; ${POSITION_DESCRIPTION}` })
  @IsOptional()
  @Transform(formInt)
  @IsPosition()
  position?: number;
}

@AtLeastOneProperty()
export class UpdateGroupDto {
  @ApiPropertyOptional({ maxLength: 1024 })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxCharacters(1024)
  title?: string;

  @ApiPropertyOptional({ type: 'integer', description: POSITION_DESCRIPTION })
  @IsOptional()
  @Transform(formInt)
  @IsPosition()
  position?: number;
}

export class GroupsQueryDto {
  @ApiPropertyOptional({ type: 'integer', description: 'only groups of this type' })
  @IsOptional()
  @Transform(formId)
  @IsInt()
  @Min(1)
  type_id?: number;
}
