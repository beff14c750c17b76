import { Body, Controller, HttpCode, Param, Post } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Actor } from '../../../shared/domain/actor.js';
import { CurrentActor } from '../../../shared/http/actor.decorator.js';
import { Conflicts } from '../../../shared/http/error-responses.js';
import { ParseIdPipe } from '../../../shared/http/parse-id.pipe.js';
import { GroupingApi } from '../../grouping/index.js';
import { CardViewsService } from '../application/card-views.service.js';
import { AddToGroupDto, RemoveFromGroupDto, RemoveFromGroupTypeDto } from './dto/cards.dto.js';
import { CardDto } from './dto/card-responses.dto.js';
import { WorkspaceRoutes } from '../../../shared/http/scopes.decorator.js';

const CARD_RESPONSE = { type: CardDto, description: 'the whole updated card' };

/** Card operations on memberships (grouping's use cases): each answers 200 with the whole card. */
@ApiTags('grouping')
@WorkspaceRoutes()
@Controller('cards')
export class CardMembershipsController {
  constructor(
    private readonly grouping: GroupingApi,
    private readonly views: CardViewsService,
  ) {}

  @Post(':id/add-to-group')
  @ApiOperation({ operationId: 'CardMembershipsController_addToGroup', summary: 'Add a card to a group' })
  @HttpCode(200)
  @ApiOkResponse(CARD_RESPONSE)
  @Conflicts({ 'GROUPING.ONE_GROUP_PER_CARD': 'the type allows one group per card and the card is in another of its groups; move it with relocate' })
  async addToGroup(@CurrentActor() actor: Actor, @Param('id', ParseIdPipe) id: number, @Body() dto: AddToGroupDto) {
    await this.grouping.addToGroup(id, dto, actor);
    return this.views.one(id);
  }

  @Post(':id/remove-from-group')
  @ApiOperation({ operationId: 'CardMembershipsController_removeFromGroup', summary: 'Remove a card from a group' })
  @HttpCode(200)
  @ApiOkResponse(CARD_RESPONSE)
  async removeFromGroup(@CurrentActor() actor: Actor, @Param('id', ParseIdPipe) id: number, @Body() dto: RemoveFromGroupDto) {
    await this.grouping.removeFromGroup(id, dto, actor);
    return this.views.one(id);
  }

  @Post(':id/remove-from-group-type')
  @ApiOperation({ operationId: 'CardMembershipsController_removeFromGroupType', summary: "Remove a card from a group type's groups" })
  @HttpCode(200)
  @ApiOkResponse(CARD_RESPONSE)
  async removeFromGroupType(@CurrentActor() actor: Actor, @Param('id', ParseIdPipe) id: number, @Body() dto: RemoveFromGroupTypeDto) {
    await this.grouping.removeFromGroupType(id, dto, actor);
    return this.views.one(id);
  }
}
