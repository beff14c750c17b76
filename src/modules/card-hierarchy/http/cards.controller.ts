import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query, Res } from '@nestjs/common';
import { ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import type { Actor } from '../../../shared/domain/actor.js';
import { CurrentActor } from '../../../shared/http/actor.decorator.js';
import { deleted, DeletionRoute } from '../../../shared/http/deletion.js';
import { pageRequest, setPageHeaders } from '../../../shared/http/pagination.js';
import { ParseIdPipe } from '../../../shared/http/parse-id.pipe.js';
import { CardStreamService } from '../application/card-stream.service.js';
import { CardsService } from '../application/cards.service.js';
import { RelocateCardService } from '../application/relocate-card.service.js';
import { CommentDto, CreateCardDto, PageQueryDto, RelocateCardDto, SetStateDto, UpdateCardDto } from './dto/card.dto.js';

@ApiTags('cards')
@ApiSecurity('api_key')
@Controller('cards')
export class CardsController {
  constructor(
    private readonly cards: CardsService,
    private readonly relocation: RelocateCardService,
    private readonly stream: CardStreamService,
  ) {}

  @Get(':id')
  get(@CurrentActor() actor: Actor, @Param('id', ParseIdPipe) id: number) {
    return this.cards.get(id, actor);
  }

  @Get(':id/children')
  children(@CurrentActor() actor: Actor, @Param('id', ParseIdPipe) id: number) {
    return this.cards.children(id, actor);
  }

  @Post(':id/children')
  create(@CurrentActor() actor: Actor, @Param('id', ParseIdPipe) id: number, @Body() dto: CreateCardDto) {
    return this.cards.create(id, { ...dto }, actor);
  }

  @Put(':id')
  update(@CurrentActor() actor: Actor, @Param('id', ParseIdPipe) id: number, @Body() dto: UpdateCardDto) {
    return this.cards.update(id, dto, actor);
  }

  @Post(':id/state')
  @HttpCode(200)
  setState(@CurrentActor() actor: Actor, @Param('id', ParseIdPipe) id: number, @Body() dto: SetStateDto) {
    return this.cards.setState(id, dto.state, actor);
  }

  @Post(':id/archive')
  @HttpCode(200)
  archive(@CurrentActor() actor: Actor, @Param('id', ParseIdPipe) id: number) {
    return this.cards.setArchived(id, true, actor);
  }

  @Delete(':id/archive')
  restore(@CurrentActor() actor: Actor, @Param('id', ParseIdPipe) id: number) {
    return this.cards.setArchived(id, false, actor);
  }

  @DeletionRoute(':id', 'the card and its subtree are gone')
  async delete(@CurrentActor() actor: Actor, @Param('id', ParseIdPipe) id: number) {
    await this.cards.delete(id, actor);
    return deleted(id);
  }

  @Post(':id/relocate')
  @HttpCode(200)
  relocate(@CurrentActor() actor: Actor, @Param('id', ParseIdPipe) id: number, @Body() dto: RelocateCardDto) {
    return this.relocation.relocate(id, { ...dto }, actor);
  }

  @Get(':id/stream')
  async streamPage(
    @CurrentActor() actor: Actor,
    @Param('id', ParseIdPipe) id: number,
    @Query() query: PageQueryDto,
    @Res({ passthrough: true }) res: Response,
  ) {
    const page = pageRequest(query);
    const result = await this.stream.list(id, actor, page);
    setPageHeaders(res, page, result.total);
    return result.items;
  }

  @Post(':id/comments')
  comment(@CurrentActor() actor: Actor, @Param('id', ParseIdPipe) id: number, @Body() dto: CommentDto) {
    return this.stream.comment(id, dto.content, actor);
  }
}
