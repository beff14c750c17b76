import { ApiProperty, ApiPropertyOptional, type SchemaObject } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import {
  Allow,
  IsBoolean,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsObject,
  IsOptional,
  IsString,
  Min,
} from 'class-validator';
import { formBool, formId, formInt, formJsonObject } from '../../../../shared/http/form-values.js';
import { CARD_STATES, type CardState } from '../../../card-hierarchy/index.js';
import { MaxCharacters } from '../../../../shared/http/max-characters.js';
import { ClientMap } from '../../../../shared/http/validation.pipe.js';
import { IsPosition } from '../../../../shared/http/is-position.js';
import { POSITION_DESCRIPTION } from '../../../../shared/domain/positions.js';
import { AtLeastOneProperty } from '../../../../shared/http/api-properties.js';
import { PAGE_PARAMETER, PER_PAGE_PARAMETER } from '../../../../shared/http/list-query.dto.js';
import { MAX_FILTER_LENGTH } from '../../filter/filter.parser.js';

export class CreateCardDto {
  @ApiProperty({ maxLength: 1024 })
  @IsString()
  @IsNotEmpty()
  @MaxCharacters(1024)
  title: string;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'field name or id → value (in a form: the object as one field of JSON text)' })
  @IsOptional()
  @Transform(formJsonObject)
  @IsObject()
  @ClientMap()
  attributes?: Record<string, unknown>;

  @ApiPropertyOptional({ type: 'integer', description: 'group to put the new card in' })
  @IsOptional()
  @Allow()
  group_id?: unknown;
}

@AtLeastOneProperty()
export class UpdateCardDto {
  @ApiPropertyOptional({ maxLength: 1024 })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxCharacters(1024)
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
  @Transform(formId)
  @IsInt()
  @Min(1)
  parent_id?: number;

  @ApiPropertyOptional({ type: 'integer', description: POSITION_DESCRIPTION })
  @IsOptional()
  @Transform(formInt)
  @IsPosition()
  position?: number;

  @ApiPropertyOptional({ type: 'integer', description: 'group (column) to move the card into' })
  @IsOptional()
  @Allow()
  group_id?: unknown;
}

/** How readBool reads a listing's flags. */
const LISTING_FLAG = { type: 'boolean', description: 'true or false in any case, or 1 or 0; empty is false, anything else a 400' } as const;

/** What every card listing takes: which cards (archived ones too?) and in which form. GET /cards/{id}/children takes only these. */
export class ChildrenQueryDto {
  @ApiPropertyOptional({ ...LISTING_FLAG, description: `also the archived cards and those under an archived card; ${LISTING_FLAG.description}` })
  @IsOptional()
  @IsString()
  with_archived?: string;
  @ApiPropertyOptional({ ...LISTING_FLAG, description: `the ids only, as a JSON array of integers; ${LISTING_FLAG.description}` })
  @IsOptional()
  @IsString()
  only_ids?: string;
}

export class CardListQueryDto extends ChildrenQueryDto {
  @ApiPropertyOptional(PAGE_PARAMETER) @IsOptional() @IsString() page?: string;
  @ApiPropertyOptional(PER_PAGE_PARAMETER) @IsOptional() @IsString() per_page?: string;
  @ApiPropertyOptional({ description: 'X-Service-NextCursor of the previous page: the next page by keyset (not with page)' })
  @IsOptional()
  @IsString()
  cursor?: string;
  @ApiPropertyOptional({ maxLength: MAX_FILTER_LENGTH, description: 'filter expression (DESIGN.md §7, docs/FILTERS.md)' })
  @IsOptional()
  @IsString()
  filter?: string;
  @ApiPropertyOptional({ maxLength: MAX_FILTER_LENGTH, description: 'another name for `filter` (sent by the original\'s clients)' })
  @IsOptional()
  @IsString()
  filters?: string;
}

/** GET /search: the listing's parameters, over every project the caller can see. */
export class SearchQueryDto extends CardListQueryDto {}

export class CreateProjectDto {
  @ApiProperty({ maxLength: 1024 })
  @IsString()
  @IsNotEmpty()
  @MaxCharacters(1024)
  title: string;
}

export class CreateGroupTypeDto {
  @ApiProperty({ maxLength: 1024, description: 'also the name of the group_type field the type owns' })
  @IsString()
  @IsNotEmpty()
  @MaxCharacters(1024)
  name: string;

  @ApiPropertyOptional({ default: false, description: 'a card may be in one group of this type at most (columns)' })
  @IsOptional()
  @Transform(formBool)
  @IsBoolean()
  one_group_per_card?: boolean;
}

@AtLeastOneProperty()
export class UpdateGroupTypeDto {
  @ApiPropertyOptional({ maxLength: 1024 })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxCharacters(1024)
  name?: string;

  @ApiPropertyOptional()
  @IsOptional()
  @Transform(formBool)
  @IsBoolean()
  one_group_per_card?: boolean;
}

export class AddToGroupDto {
  @ApiProperty({ type: 'integer', description: 'a group scoped at one of the card’s ancestors' })
  @Transform(formId)
  @IsInt()
  @Min(1)
  group_id: number;

  @ApiPropertyOptional({ type: 'integer', description: `place in the group’s column; default last; ${POSITION_DESCRIPTION}` })
  @IsOptional()
  @Transform(formInt)
  @IsPosition()
  position?: number;
}

export class RemoveFromGroupDto {
  @ApiProperty({ type: 'integer' })
  @Transform(formId)
  @IsInt()
  @Min(1)
  group_id: number;
}

export class RemoveFromGroupTypeDto {
  @ApiProperty({ type: 'integer' })
  @Transform(formId)
  @IsInt()
  @Min(1)
  type_id: number;
}

/** Schemas of the free-form bodies (checked by the service, not by class-validator). */
export const VALUE_BODY_SCHEMA: SchemaObject = {
  type: 'object',
  properties: { value: { description: 'type per field type (see GET /attribute-types and DESIGN.md §5)' } },
  required: ['value'],
  example: { value: 3 },
};

/** The multipart form of a value (ValueUpload): the file in the part `value`, or, without a file, the value as text. */
export const VALUE_UPLOAD_SCHEMA: SchemaObject = {
  type: 'object',
  properties: {
    value: {
      type: 'string',
      format: 'binary',
      description:
        'a files field: the file, as a part with a file name (nothing else beside it). ' +
        'Without a file, the part is the value as text, read as a form field is (any field type; a files field: a URL)',
    },
  },
  required: ['value'],
};

export const ATTRIBUTES_BODY_SCHEMA: SchemaObject = {
  type: 'object',
  description:
    '{"attributes": {<field name or id>: value, …}}, or the flat form {<field name>: value, …}. ' +
    'Either every value is set or none. In a form: `attributes` as one field of JSON text, or the flat form\'s ' +
    '`<field name>=<value>` fields, each value as text.',
  properties: { attributes: { type: 'object', additionalProperties: true } },
  additionalProperties: true,
  example: { attributes: { Estimate: 3, Owner: '@ann' } },
};

export const POP_BODY_SCHEMA: SchemaObject = {
  type: 'object',
  description: '{"value": v} removes v (a user id or @username, a card id, a file id); no body removes the last value',
  properties: { value: {} },
};

export const MODEL_BODY_SCHEMA: SchemaObject = {
  type: 'object',
  properties: {
    model_id: { type: 'integer', nullable: true, description: 'null, or no model_id at all (as the original allows), removes the model' },
  },
};
