import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsIn, IsNotEmpty, IsObject, IsOptional, IsString } from 'class-validator';
import { FIELD_TYPES } from '../../domain/values/index.js';
import { AtLeastOneProperty, IdProperty } from '../../../../shared/http/api-properties.js';
import { MaxCharacters } from '../../../../shared/http/max-characters.js';
import { formJsonObject } from '../../../../shared/http/form-values.js';

/** The types POST /projects/{id}/attributes makes: a group_type field comes with its group type. */
const CREATABLE_TYPES = FIELD_TYPES.filter((t) => t !== 'group_type');

const OPTIONS_DOC = {
  type: 'object',
  additionalProperties: { type: 'boolean' },
  description: 'date fields: {"time": true} and/or {"period": true}; other types take none',
  example: { time: true },
} as const;

/** The options a request gives: the date options, the only ones there are (any other is a 400); in a form, one field of JSON text. */
const OPTIONS_INPUT = {
  type: 'object',
  properties: {
    time: { type: 'boolean', description: 'date fields only: values may have a time of day' },
    period: { type: 'boolean', description: 'date fields only: values are periods, {"start", "end"}' },
  },
  additionalProperties: false,
  description: 'date fields only (other types take none): {"time": true} and/or {"period": true}; in a form, the object as one field of JSON text',
  example: { time: true },
} as const;

export class CreateAttributeDto {
  @ApiProperty({ maxLength: 1024, example: 'Estimate' })
  @IsString()
  @IsNotEmpty()
  @MaxCharacters(1024)
  name: string;

  @ApiProperty({ enum: CREATABLE_TYPES, description: 'group_type fields come with group types' })
  @IsString()
  // group_type passes, for the service to say where such a field comes from; the message lists what this endpoint makes.
  @IsIn(FIELD_TYPES as unknown as string[], { message: `$property must be one of the following values: ${CREATABLE_TYPES.join(', ')}` })
  type: string;

  @ApiPropertyOptional(OPTIONS_INPUT)
  @IsOptional()
  @Transform(formJsonObject)
  @IsObject()
  options?: Record<string, unknown>;
}

@AtLeastOneProperty()
export class UpdateAttributeDto {
  @ApiPropertyOptional({ maxLength: 1024 })
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxCharacters(1024)
  name?: string;

  @ApiPropertyOptional({ description: 'must equal the current type: the type of a field never changes' })
  @IsOptional()
  @IsString()
  type?: string;

  @ApiPropertyOptional(OPTIONS_INPUT)
  @IsOptional()
  @Transform(formJsonObject)
  @IsObject()
  options?: Record<string, unknown>;
}

export class CreateModelDto {
  @ApiProperty({ maxLength: 1024, example: 'Bug' })
  @IsString()
  @IsNotEmpty()
  @MaxCharacters(1024)
  name: string;
}

export class AttributeDto {
  @IdProperty() id: number;
  @ApiProperty() name: string;
  @ApiProperty({ enum: FIELD_TYPES }) type: string;
  @IdProperty() project_id: number;
  @IdProperty({ nullable: true, description: 'null for a project field' }) model_id: number | null;
  @ApiProperty(OPTIONS_DOC) options: Record<string, boolean>;
  @IdProperty({ nullable: true, description: 'set on group_type fields' }) group_type_id: number | null;
}

export class AttributeTypeDto {
  @ApiProperty({ enum: FIELD_TYPES }) type: string;
  @ApiProperty() label: string;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string', enum: ['boolean'] }, example: { time: 'boolean' } })
  options: Record<string, string>;
}

export class ModelDto {
  @IdProperty() id: number;
  @IdProperty() project_id: number;
  @ApiProperty() name: string;
}

