import { Body, Controller, HttpCode, Param, Post } from '@nestjs/common';
import { ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { Actor } from '../../../shared/domain/actor.js';
import { CurrentActor } from '../../../shared/http/actor.decorator.js';
import { ParseIdPipe } from '../../../shared/http/parse-id.pipe.js';
import { MembershipsService } from '../application/memberships.service.js';
import { AddToGroupDto, RemoveFromGroupDto, RemoveFromGroupTypeDto } from './dto/grouping.dto.js';

/** Card operations on memberships: each answers 200 with the whole card. */
@ApiTags('grouping')
@ApiSecurity('api_key')
@Controller('cards')
export class CardMembershipsController {
  constructor(private readonly memberships: MembershipsService) {}

  @Post(':id/add-to-group')
  @HttpCode(200)
  addToGroup(@CurrentActor() actor: Actor, @Param('id', ParseIdPipe) id: number, @Body() dto: AddToGroupDto) {
    return this.memberships.addToGroup(id, dto, actor);
  }

  @Post(':id/remove-from-group')
  @HttpCode(200)
  removeFromGroup(@CurrentActor() actor: Actor, @Param('id', ParseIdPipe) id: number, @Body() dto: RemoveFromGroupDto) {
    return this.memberships.removeFromGroup(id, dto, actor);
  }

  @Post(':id/remove-from-group-type')
  @HttpCode(200)
  removeFromGroupType(@CurrentActor() actor: Actor, @Param('id', ParseIdPipe) id: number, @Body() dto: RemoveFromGroupTypeDto) {
    return this.memberships.removeFromGroupType(id, dto, actor);
  }
}
