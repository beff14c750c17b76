import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString } from 'class-validator';
import { DEFAULT_PER_PAGE, MAX_PAGE, MAX_PER_PAGE } from './pagination.js';

/** `page` as pageRequest reads it (digits only, as text or a number). */
export const PAGE_PARAMETER = { type: 'integer', minimum: 1, maximum: MAX_PAGE, default: 1 } as const;
/** `per_page` as pageRequest reads it. */
export const PER_PAGE_PARAMETER = { type: 'integer', minimum: 1, maximum: MAX_PER_PAGE, default: DEFAULT_PER_PAGE } as const;

/**
 * The query of a listing is declared like a body, as `@Query() query: <Dto>`,
 * and the global ValidationPipe (whitelist, forbidNonWhitelisted) refuses any
 * parameter the class does not name: 400 naming it. Every listing declares
 * one, so none ignores what it does not take (DESIGN.md §2).
 */

/**
 * A listing that answers all its items at once and takes no parameter:
 * `page`, `per_page` and `cursor` are refused like any unknown parameter,
 * rather than ignored by a client that would think it got one page.
 */
export class NoQueryDto {}

/** A listing paginated by `page` and `per_page` (read by `pageRequest`: out of range → 400); no `cursor`. */
export class PageQueryDto {
  @ApiPropertyOptional(PAGE_PARAMETER)
  @IsOptional()
  @IsString()
  page?: string;

  @ApiPropertyOptional(PER_PAGE_PARAMETER)
  @IsOptional()
  @IsString()
  per_page?: string;
}

/** A listing paginated by `page` or, keyset, by `cursor` (read by `listingRequest`: both at once → 400), and `per_page`. */
export class CursorPageQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ description: 'X-Service-NextCursor of the previous page: the next page by keyset (not with page)' })
  @IsOptional()
  @IsString()
  cursor?: string;
}
