import { Body, Controller, Get, Param, Post, Put, Query, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import type { Actor } from '../../../shared/domain/actor.js';
import { CurrentActor } from '../../../shared/http/actor.decorator.js';
import { ApiCreatedWithLocation, created } from '../../../shared/http/created-location.js';
import { deleted, DeletionRoute } from '../../../shared/http/deletion.js';
import { Conflicts } from '../../../shared/http/error-responses.js';
import { NoQueryDto } from '../../../shared/http/list-query.dto.js';
import { ParseIdPipe } from '../../../shared/http/parse-id.pipe.js';
import { GroupsService } from '../application/groups.service.js';
import { CreateGroupDto, GroupsQueryDto, UpdateGroupDto } from './dto/grouping.dto.js';
import { GroupDto } from './dto/grouping-responses.dto.js';
import { WorkspaceRoutes } from '../../../shared/http/scopes.decorator.js';

const TITLE_TAKEN = { 'GROUPING.DUPLICATE_GROUP_TITLE': 'a group of that title (any case) exists in this scope and type' };

@ApiTags('grouping')
@WorkspaceRoutes()
@Controller()
export class GroupsController {
  constructor(private readonly groups: GroupsService) {}

  /** The groups available to cards under this card: scoped at it or at an ancestor. */
  @Get('cards/:id/groups')
  @ApiOperation({ operationId: 'GroupsController_available', summary: 'List the groups available to cards under a card' })
  @ApiOkResponse({ type: [GroupDto], description: 'the groups scoped at the card or at one of its ancestors' })
  available(@CurrentActor() actor: Actor, @Param('id', ParseIdPipe) cardId: number, @Query() query: GroupsQueryDto) {
    return this.groups.availableUnder(cardId, query, actor);
  }

  /** All groups of the type, scoped at any card (ordered by scope card, then position). */
  @Get('group-types/:id/groups')
  @ApiOperation({ operationId: 'GroupsController_ofType', summary: "List a group type's groups" })
  @ApiOkResponse({ type: [GroupDto], description: 'every group of the type' })
  ofType(@CurrentActor() actor: Actor, @Param('id', ParseIdPipe) typeId: number, @Query() _query: NoQueryDto) {
    return this.groups.ofType(typeId, actor);
  }

  @Post('cards/:id/groups')
  @ApiOperation({ operationId: 'GroupsController_create', summary: 'Create a group scoped at a card' })
  @ApiCreatedWithLocation({ type: GroupDto, description: 'the new group, scoped at the card' })
  @Conflicts(TITLE_TAKEN)
  async create(
    @CurrentActor() actor: Actor,
    @Param('id', ParseIdPipe) cardId: number,
    @Body() dto: CreateGroupDto,
    @Res({ passthrough: true }) res: Response,
  ) {
    return created(res, '/groups/', await this.groups.create(cardId, dto, actor));
  }

  @Get('groups/:id')
  @ApiOperation({ operationId: 'GroupsController_get', summary: 'Get a group' })
  @ApiOkResponse({ type: GroupDto, description: 'the group' })
  get(@CurrentActor() actor: Actor, @Param('id', ParseIdPipe) id: number) {
    return this.groups.get(id, actor);
  }

  @Put('groups/:id')
  @ApiOperation({ operationId: 'GroupsController_update', summary: 'Update a group' })
  @ApiOkResponse({ type: GroupDto, description: 'the updated group' })
  @Conflicts(TITLE_TAKEN)
  update(@CurrentActor() actor: Actor, @Param('id', ParseIdPipe) id: number, @Body() dto: UpdateGroupDto) {
    return this.groups.update(id, dto, actor);
  }

  @DeletionRoute('groups/:id', 'the group and its memberships are gone; the cards stay')
  @ApiOperation({ operationId: 'GroupsController_delete', summary: 'Delete a group' })
  async delete(@CurrentActor() actor: Actor, @Param('id', ParseIdPipe) id: number) {
    await this.groups.delete(id, actor);
    return deleted(id);
  }
}
