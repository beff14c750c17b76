import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsNotEmpty, IsOptional, IsString, MaxLength } from 'class-validator';

export class CommentDto {
  @ApiProperty({ maxLength: 100000 })
  @IsString()
  @IsNotEmpty()
  @MaxLength(100_000)
  content: string;
}

export class StreamPageQueryDto {
  @ApiPropertyOptional() @IsOptional() @IsString() page?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() per_page?: string;
}
