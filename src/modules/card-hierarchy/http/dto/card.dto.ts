import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { Allow, IsIn, IsInt, IsNotEmpty, IsObject, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { CARD_STATES, type CardState } from '../../contracts/card-hierarchy.api.js';

// Form fields carry numbers as text (DESIGN.md §2): accept their decimal form.
const toInt = ({ value }: { value: unknown }) => (typeof value === 'string' && /^\d{1,15}$/.test(value) ? Number(value) : value);

export class CreateCardDto {
  @ApiProperty({ maxLength: 1024 })
  @IsString()
  @IsNotEmpty()
  @MaxLength(1024)
  title: string;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'field name or id → value' })
  @IsOptional()
  @IsObject()
  attributes?: Record<string, unknown>;

  @ApiPropertyOptional({ type: 'integer', description: 'group to put the new card in' })
  @IsOptional()
  @Allow()
  group_id?: unknown;
}

export class UpdateCardDto {
  @ApiPropertyOptional({ maxLength: 1024 })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(1024)
  title?: string;

  @ApiPropertyOptional({ enum: CARD_STATES })
  @IsOptional()
  @IsIn(CARD_STATES as unknown as string[])
  state?: CardState;
}

export class SetStateDto {
  @ApiProperty({ enum: CARD_STATES })
  @IsIn(CARD_STATES as unknown as string[])
  state: CardState;
}

export class RelocateCardDto {
  @ApiPropertyOptional({ type: 'integer', description: 'new parent; the current one keeps it' })
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1)
  parent_id?: number;

  @ApiPropertyOptional({ type: 'integer', minimum: 0 })
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(1_000_000_000)
  position?: number;

  @ApiPropertyOptional({ type: 'integer', description: 'group (column) to move the card into' })
  @IsOptional()
  @Allow()
  group_id?: unknown;
}

export class CommentDto {
  @ApiProperty({ maxLength: 100000 })
  @IsString()
  @IsNotEmpty()
  @MaxLength(100_000)
  content: string;
}

export class CardListQueryDto {
  @ApiPropertyOptional() @IsOptional() @IsString() page?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() per_page?: string;
  @ApiPropertyOptional({ enum: ['true', 'false'] }) @IsOptional() @IsString() with_archived?: string;
  @ApiPropertyOptional({ enum: ['true', 'false'] }) @IsOptional() @IsString() only_ids?: string;
  @ApiPropertyOptional({ description: 'filter expression (DESIGN.md §7)' }) @IsOptional() @IsString() filter?: string;
}

export class PageQueryDto {
  @ApiPropertyOptional() @IsOptional() @IsString() page?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() per_page?: string;
}
