import { ApiProperty } from '@nestjs/swagger';
import { IsNotEmpty, IsString } from 'class-validator';
import { MaxCharacters } from '../../../../shared/http/max-characters.js';

export class CommentDto {
  @ApiProperty({ maxLength: 100000 })
  @IsString()
  @IsNotEmpty()
  @MaxCharacters(100_000)
  content: string;
}
