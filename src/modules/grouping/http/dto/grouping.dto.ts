import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsNotEmpty, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { formInt } from '../../../../shared/http/form-values.js';
import { MAX_POSITION } from '../../domain/grouping.policy.js';


export class CreateGroupDto {
  @ApiProperty({ type: 'integer', description: 'group type (of the card’s project)' })
  @Transform(formInt)
  @IsInt()
  @Min(1)
  type_id: number;

  @ApiProperty({ maxLength: 1024, description: 'unique (any case) among the groups of this type scoped at the card' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(1024)
  title: string;

  @ApiPropertyOptional({ type: 'integer', minimum: 0, description: 'place among the groups of this type and scope; default last' })
  @IsOptional()
  @Transform(formInt)
  @IsInt()
  @Min(0)
  @Max(MAX_POSITION)
  position?: number;
}

export class UpdateGroupDto {
  @ApiPropertyOptional({ maxLength: 1024 })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(1024)
  title?: string;

  @ApiPropertyOptional({ type: 'integer', minimum: 0 })
  @IsOptional()
  @Transform(formInt)
  @IsInt()
  @Min(0)
  @Max(MAX_POSITION)
  position?: number;
}

export class GroupsQueryDto {
  @ApiPropertyOptional({ type: 'integer', description: 'only groups of this type' })
  @IsOptional()
  @Transform(formInt)
  @IsInt()
  @Min(1)
  type_id?: number;
}
