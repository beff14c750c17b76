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
import { GroupTypesWithFieldService } from '../application/group-types-with-field.service.js';
import { CreateGroupTypeDto, UpdateGroupTypeDto } from './dto/cards.dto.js';
import { GroupTypeDto } from './dto/card-responses.dto.js';
import { WorkspaceRoutes } from '../../../shared/http/scopes.decorator.js';

/** A type's name is also its group_type field's, so it must be free among both. */
const NAMES_TAKEN = {
  'GROUPING.DUPLICATE_GROUP_TYPE_NAME': 'a group type of that name (any case) exists in the project',
  'FIELDS.NAME_TAKEN': 'a field of that name (any case) exists in the project',
};

/** Group types (grouping) with their `group_type` field (fields). */
@ApiTags('grouping')
@WorkspaceRoutes()
@Controller()
export class GroupTypesController {
  constructor(private readonly types: GroupTypesWithFieldService) {}

  @Get('projects/:id/group-types')
  @ApiOperation({ operationId: 'GroupTypesController_list', summary: "List a project's group types" })
  @ApiOkResponse({ type: [GroupTypeDto], description: "the project's group types" })
  list(@CurrentActor() actor: Actor, @Param('id', ParseIdPipe) projectId: number, @Query() _query: NoQueryDto) {
    return this.types.list(projectId, actor);
  }

  @Post('projects/:id/group-types')
  @ApiOperation({ operationId: 'GroupTypesController_create', summary: 'Create a group type in a project' })
  @ApiCreatedWithLocation({ type: GroupTypeDto, description: 'the new group type, with the group_type field it owns' })
  @Conflicts(NAMES_TAKEN)
  async create(
    @CurrentActor() actor: Actor,
    @Param('id', ParseIdPipe) projectId: number,
    @Body() dto: CreateGroupTypeDto,
    @Res({ passthrough: true }) res: Response,
  ) {
    return created(res, '/group-types/', await this.types.create(projectId, dto, actor));
  }

  @Get('group-types/:id')
  @ApiOperation({ operationId: 'GroupTypesController_get', summary: 'Get a group type' })
  @ApiOkResponse({ type: GroupTypeDto, description: 'the group type' })
  get(@CurrentActor() actor: Actor, @Param('id', ParseIdPipe) id: number) {
    return this.types.get(id, actor);
  }

  @Put('group-types/:id')
  @ApiOperation({ operationId: 'GroupTypesController_update', summary: 'Update a group type' })
  @ApiOkResponse({ type: GroupTypeDto, description: 'the updated group type' })
  @Conflicts({ ...NAMES_TAKEN, 'GROUPING.SEVERAL_GROUPS_PER_CARD': 'one_group_per_card cannot turn on while a card is in several groups of the type' })
  update(@CurrentActor() actor: Actor, @Param('id', ParseIdPipe) id: number, @Body() dto: UpdateGroupTypeDto) {
    return this.types.update(id, dto, actor);
  }

  @DeletionRoute('group-types/:id', 'the group type, its groups, memberships and field are gone; the cards stay')
  @ApiOperation({ operationId: 'GroupTypesController_delete', summary: 'Delete a group type' })
  async delete(@CurrentActor() actor: Actor, @Param('id', ParseIdPipe) id: number) {
    await this.types.delete(id, actor);
    return deleted(id);
  }
}
