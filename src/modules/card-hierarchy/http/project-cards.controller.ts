import { Controller, Get, Param, Query, Res } from '@nestjs/common';
import { ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import type { Actor } from '../../../shared/domain/actor.js';
import { CurrentActor } from '../../../shared/http/actor.decorator.js';
import { pageRequest, setPageHeaders } from '../../../shared/http/pagination.js';
import { ParseIdPipe } from '../../../shared/http/parse-id.pipe.js';
import { ProjectCardsService } from '../application/project-cards.service.js';
import { InvalidCardInputError } from '../domain/card.errors.js';
import { CardListQueryDto } from './dto/card.dto.js';

function readBool(value: string | undefined, field: string): boolean {
  if (value === undefined || value === '') return false;
  const v = value.toLowerCase();
  if (v === 'true' || v === '1') return true;
  if (v === 'false' || v === '0') return false;
  throw new InvalidCardInputError(field, 'must be true or false');
}

@ApiTags('cards')
@ApiSecurity('api_key')
@Controller('projects')
export class ProjectCardsController {
  constructor(private readonly listing: ProjectCardsService) {}

  @Get(':id/cards')
  async list(
    @CurrentActor() actor: Actor,
    @Param('id', ParseIdPipe) id: number,
    @Query() query: CardListQueryDto,
    @Res({ passthrough: true }) res: Response,
  ) {
    if (query.filter !== undefined) throw new InvalidCardInputError('filter', 'filter expressions are not supported yet');
    const page = pageRequest(query);
    const result = await this.listing.list(id, actor, page, {
      withArchived: readBool(query.with_archived, 'with_archived'),
      onlyIds: readBool(query.only_ids, 'only_ids'),
    });
    setPageHeaders(res, page, result.total);
    return result.items;
  }
}
