import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query, Res } from '@nestjs/common';
import { ApiBody, ApiExtraModels, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import type { Actor } from '../../../shared/domain/actor.js';
import { CurrentActor } from '../../../shared/http/actor.decorator.js';
import { ApiCreatedWithLocation, created } from '../../../shared/http/created-location.js';
import { deleted, DeletionRoute } from '../../../shared/http/deletion.js';
import { Conflicts, RouteErrors, UPLOAD_MEMORY_SHARE } from '../../../shared/http/error-responses.js';
import { sendJsonArray } from '../../../shared/http/json-text.js';
import { ParseIdPipe } from '../../../shared/http/parse-id.pipe.js';
import { CardHierarchyApi } from '../../card-hierarchy/index.js';
import { CardViewsService } from '../application/card-views.service.js';
import { CreateCardsService } from '../application/create-cards.service.js';
import { DeleteCardService } from '../application/delete-card.service.js';
import { RelocateCardService } from '../application/relocate-card.service.js';
import { ChildrenQueryDto, CreateCardDto, RelocateCardDto, SetStateDto, UpdateCardDto } from './dto/cards.dto.js';
import { CARD_LISTING_SCHEMA, CardDto } from './dto/card-responses.dto.js';
import { readListingOptions } from './listing-params.js';
import { WorkspaceRoutes } from '../../../shared/http/scopes.decorator.js';

/** Tree writes lock the cards they change in one order, planned again while the tree moves under them (TreeLocksService). */
const TREE_BUSY = { 'CARD.TREE_BUSY': 'the cards this change needs kept changing while it waited for them; retry' };
/** MAX_CARD_DEPTH: a card deeper than that is neither created nor moved there. */
const TOO_DEEP = 'a card would be deeper than MAX_CARD_DEPTH levels below the top-level card';

/** The card routes that answer with the card JSON; the tree-only use cases are card-hierarchy's. */
@ApiTags('cards')
@ApiExtraModels(CardDto)
@WorkspaceRoutes()
@Controller('cards')
export class CardsController {
  constructor(
    private readonly hierarchy: CardHierarchyApi,
    private readonly views: CardViewsService,
    private readonly creation: CreateCardsService,
    private readonly relocation: RelocateCardService,
    private readonly deletion: DeleteCardService,
  ) {}

  @Get(':id')
  @ApiOperation({ operationId: 'CardsController_get', summary: 'Get a card' })
  @ApiOkResponse({ type: CardDto, description: 'the card' })
  get(@CurrentActor() actor: Actor, @Param('id', ParseIdPipe) id: number) {
    // The access check, the row, its values and its groups: one statement.
    return this.views.seenBy(id, actor);
  }

  @Get(':id/children')
  @ApiOperation({ operationId: 'CardsController_children', summary: "List a card's children" })
  @ApiOkResponse({ schema: CARD_LISTING_SCHEMA, description: "the card's children in position order (with only_ids=true, their ids)" })
  async children(@CurrentActor() actor: Actor, @Param('id', ParseIdPipe) id: number, @Query() query: ChildrenQueryDto, @Res() res: Response): Promise<void> {
    // Archived children are left out as from every card listing (DESIGN.md §4).
    const { withArchived, onlyIds } = readListingOptions(query);
    if (onlyIds) {
      res.json((await this.hierarchy.children(id, actor, { withArchived, limit: 0 })).rest);
      return;
    }
    // Every child, unpaginated: written a part at a time, each read once the one before is sent.
    await sendJsonArray(res, await this.views.childrenJson(id, actor, withArchived));
  }

  @Post(':id/children')
  @ApiOperation({ operationId: 'CardsController_create', summary: 'Create a card under a card' })
  @ApiCreatedWithLocation({ type: CardDto, description: 'the new card, last among its siblings' })
  // Its `attributes` may name files by URL, downloaded before the card is created.
  @RouteErrors(UPLOAD_MEMORY_SHARE)
  @Conflicts({ 'CARD.TOO_DEEP': `the new card: ${TOO_DEEP}` })
  async create(
    @CurrentActor() actor: Actor,
    @Param('id', ParseIdPipe) id: number,
    @Body() dto: CreateCardDto,
    @Res({ passthrough: true }) res: Response,
  ) {
    return created(res, '/cards/', await this.creation.create(id, dto, actor));
  }

  @Put(':id')
  @ApiOperation({ operationId: 'CardsController_update', summary: 'Update a card' })
  @ApiOkResponse({ type: CardDto, description: 'the whole updated card' })
  async update(@CurrentActor() actor: Actor, @Param('id', ParseIdPipe) id: number, @Body() dto: UpdateCardDto) {
    await this.hierarchy.update(id, dto, actor);
    return this.views.one(id);
  }

  @Post(':id/state')
  @ApiOperation({ operationId: 'CardsController_setState', summary: "Set a card's state" })
  @HttpCode(200)
  @ApiOkResponse({ type: CardDto, description: 'the whole updated card' })
  async setState(@CurrentActor() actor: Actor, @Param('id', ParseIdPipe) id: number, @Body() dto: SetStateDto) {
    await this.hierarchy.update(id, { state: dto.state }, actor);
    return this.views.one(id);
  }

  @Post(':id/archive')
  @ApiOperation({ operationId: 'CardsController_archive', summary: 'Archive a card' })
  @HttpCode(200)
  @ApiOkResponse({ type: CardDto, description: 'the whole card, archived' })
  @Conflicts({ 'CARD.TOP_LEVEL': 'the top-level card of a project cannot be archived', ...TREE_BUSY })
  async archive(@CurrentActor() actor: Actor, @Param('id', ParseIdPipe) id: number) {
    await this.hierarchy.setArchived(id, true, actor);
    return this.views.one(id);
  }

  @Delete(':id/archive')
  @ApiOperation({ operationId: 'CardsController_restore', summary: 'Restore an archived card' })
  @ApiOkResponse({ type: CardDto, description: 'the whole card, restored' })
  @Conflicts({ 'CARD.TOP_LEVEL': 'the top-level card of a project cannot be restored', ...TREE_BUSY })
  async restore(@CurrentActor() actor: Actor, @Param('id', ParseIdPipe) id: number) {
    await this.hierarchy.setArchived(id, false, actor);
    return this.views.one(id);
  }

  @DeletionRoute(':id', 'the card and its subtree are gone')
  @ApiOperation({ operationId: 'CardsController_delete', summary: 'Delete a card and its subtree' })
  @Conflicts({ 'CARD.TOP_LEVEL': 'the top-level card of a project cannot be deleted', ...TREE_BUSY })
  async delete(@CurrentActor() actor: Actor, @Param('id', ParseIdPipe) id: number) {
    await this.deletion.delete(id, actor);
    return deleted(id);
  }

  @Post(':id/relocate')
  @ApiOperation({ operationId: 'CardsController_relocate', summary: 'Move a card' })
  @HttpCode(200)
  @ApiBody({ type: RelocateCardDto, required: false, description: 'every property is optional: no body moves the card last under its parent' })
  @ApiOkResponse({ type: CardDto, description: 'the whole relocated card' })
  @Conflicts({
    'CARD.CYCLE_DETECTED': 'the new parent is the card itself or one of its descendants',
    'CARD.TOP_LEVEL': 'the top-level card of a project cannot be relocated',
    'CARD.TOO_DEEP': `under the new parent, ${TOO_DEEP}`,
    ...TREE_BUSY,
  })
  relocate(@CurrentActor() actor: Actor, @Param('id', ParseIdPipe) id: number, @Body() dto: RelocateCardDto) {
    return this.relocation.relocate(id, dto, actor);
  }
}
