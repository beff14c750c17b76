import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString } from 'class-validator';
import { MaxCharacters } from '../../../../shared/http/max-characters.js';

export class CreateApiKeyDto {
  @ApiPropertyOptional({ description: 'A label to tell keys apart', maxLength: 200 })
  @IsOptional()
  @IsString()
  @MaxCharacters(200)
  name?: string;
}
