import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsNotEmpty, IsOptional, IsString, Validate, ValidatorConstraint, type ValidatorConstraintInterface } from 'class-validator';
import type { Role } from '../../contracts/workspace.api.js';
import { idFrom } from '../../../../shared/domain/ids.js';
import { ID_SCHEMA } from '../../../../shared/http/api-properties.js';
import { MaxCharacters } from '../../../../shared/http/max-characters.js';

export class CreateOrganizationDto {
  @ApiProperty({ maxLength: 1024 })
  @IsString()
  @IsNotEmpty()
  @MaxCharacters(1024)
  name: string;
}

@ValidatorConstraint({ name: 'userRef' })
class UserRefConstraint implements ValidatorConstraintInterface {
  validate(value: unknown): boolean {
    return idFrom(value) !== undefined || (typeof value === 'string' && /^@[A-Za-z0-9._-]{1,64}$/.test(value));
  }
  defaultMessage(): string {
    return 'must be a user id or @username';
  }
}

export class AddMemberDto {
  // An id as everywhere (idFrom: 0, negatives and leading zeros are refused, 400 naming `user`).
  @ApiProperty({ oneOf: [{ ...ID_SCHEMA }, { type: 'string', example: '@alice' }], description: 'user id or @username' })
  @Validate(UserRefConstraint)
  user: number | string;

  @ApiPropertyOptional({ enum: ['admin', 'member', 'viewer'], default: 'member' })
  @IsOptional()
  @IsIn(['admin', 'member', 'viewer'])
  role?: Role;
}

export class ChangeRoleDto {
  @ApiProperty({ enum: ['admin', 'member', 'viewer'] })
  @IsIn(['admin', 'member', 'viewer'])
  role: Role;
}

