import { Body, Controller, Get, Param, Post, Query, Res } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import type { Actor } from '../../../shared/domain/actor.js';
import { CurrentActor } from '../../../shared/http/actor.decorator.js';
import { listingRequest, setListingHeaders } from '../../../shared/http/cursor.js';
import { ParseIdPipe } from '../../../shared/http/parse-id.pipe.js';
import { CardStreamService } from '../application/card-stream.service.js';
import { CursorPageQueryDto } from '../../../shared/http/list-query.dto.js';
import { CommentDto } from './dto/card.dto.js';
import { StreamEntryDto } from './dto/stream-responses.dto.js';
import { WorkspaceRoutes } from '../../../shared/http/scopes.decorator.js';

/** A card's stream: its comments, activity and log entries. */
@ApiTags('cards')
@WorkspaceRoutes()
@Controller('cards')
export class CardStreamController {
  constructor(private readonly stream: CardStreamService) {}

  @Get(':id/stream')
  @ApiOperation({ operationId: 'CardStreamController_streamPage', summary: "List a card's stream" })
  @ApiOkResponse({ type: [StreamEntryDto], description: "the card's comments, activities and logs, newest first" })
  async streamPage(
    @CurrentActor() actor: Actor,
    @Param('id', ParseIdPipe) id: number,
    @Query() query: CursorPageQueryDto,
    @Res({ passthrough: true }) res: Response,
  ) {
    // A cursor belongs to this card's stream.
    const scope = `cards/${id}/stream`;
    const page = listingRequest(query, scope);
    const result = await this.stream.list(id, actor, page);
    setListingHeaders(res, page, result, scope);
    return result.items;
  }

  @Post(':id/comments')
  @ApiOperation({ operationId: 'CardStreamController_comment', summary: 'Comment on a card' })
  @ApiCreatedResponse({ type: StreamEntryDto, description: 'the comment, as its stream entry (kind comment, action comment.added)' })
  comment(@CurrentActor() actor: Actor, @Param('id', ParseIdPipe) id: number, @Body() dto: CommentDto) {
    return this.stream.comment(id, dto.content, actor);
  }
}
