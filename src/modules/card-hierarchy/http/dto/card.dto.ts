import { ApiProperty } from '@nestjs/swagger';
import { IsNotEmpty, IsString, MaxLength } from 'class-validator';

export class CommentDto {
  @ApiProperty({ maxLength: 100000 })
  @IsString()
  @IsNotEmpty()
  @MaxLength(100_000)
  content: string;
}
