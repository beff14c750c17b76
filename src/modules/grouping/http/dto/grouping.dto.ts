import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsNotEmpty, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';

// Form fields and query strings carry numbers as text: accept their decimal form.
const toInt = ({ value }: { value: unknown }) => (typeof value === 'string' && /^\d{1,15}$/.test(value) ? Number(value) : value);

const MAX_POSITION = 1_000_000_000;

export class CreateGroupDto {
  @ApiProperty({ type: 'integer', description: 'group type (of the card’s project)' })
  @Transform(toInt)
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
  @Transform(toInt)
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
  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(MAX_POSITION)
  position?: number;
}

export class GroupsQueryDto {
  @ApiPropertyOptional({ type: 'integer', description: 'only groups of this type' })
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1)
  type_id?: number;
}
