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
import { FieldDefinitionsService } from '../application/field-definitions.service.js';
import {
  AttributeDto,
  AttributeTypeDto,
  CreateAttributeDto,
  CreateModelDto,
  ModelDto,
  UpdateAttributeDto,
} from './dto/fields.dto.js';
import { WorkspaceRoutes } from '../../../shared/http/scopes.decorator.js';

/** A card of a model sees the project's fields and its model's, so their names differ (DESIGN.md §4). */
const NAME_TAKEN = { 'FIELDS.NAME_TAKEN': 'a field of that name (any case) exists where a card could see both' };

@ApiTags('attributes')
@WorkspaceRoutes()
@Controller()
export class FieldDefinitionsController {
  constructor(private readonly definitions: FieldDefinitionsService) {}

  @Get('attribute-types')
  @ApiOperation({ operationId: 'FieldDefinitionsController_attributeTypes', summary: 'List the field types' })
  @ApiOkResponse({ type: [AttributeTypeDto] })
  attributeTypes(@Query() _query: NoQueryDto) {
    return this.definitions.attributeTypes();
  }

  @Get('projects/:id/attributes')
  @ApiOperation({ operationId: 'FieldDefinitionsController_list', summary: "List a project's fields" })
  @ApiOkResponse({ type: [AttributeDto], description: "the project's fields (model fields: GET /models/{id}/attributes)" })
  list(@CurrentActor() actor: Actor, @Param('id', ParseIdPipe) id: number, @Query() _query: NoQueryDto) {
    return this.definitions.listProjectFields(id, actor);
  }

  @Post('projects/:id/attributes')
  @ApiOperation({ operationId: 'FieldDefinitionsController_create', summary: 'Create a field in a project' })
  @ApiCreatedWithLocation({ type: AttributeDto })
  @Conflicts(NAME_TAKEN)
  async create(
    @CurrentActor() actor: Actor,
    @Param('id', ParseIdPipe) id: number,
    @Body() dto: CreateAttributeDto,
    @Res({ passthrough: true }) res: Response,
  ) {
    return created(res, '/attributes/', await this.definitions.createProjectField(id, { ...dto }, actor));
  }

  @Get('attributes/:id')
  @ApiOperation({ operationId: 'FieldDefinitionsController_get', summary: 'Get a field' })
  @ApiOkResponse({ type: AttributeDto })
  get(@CurrentActor() actor: Actor, @Param('id', ParseIdPipe) id: number) {
    return this.definitions.getField(id, actor);
  }

  @Put('attributes/:id')
  @ApiOperation({ operationId: 'FieldDefinitionsController_update', summary: 'Update a field' })
  @ApiOkResponse({ type: AttributeDto })
  @Conflicts({ ...NAME_TAKEN, 'FIELDS.FIELD_HAS_VALUES': 'the field has values, so its time and period options cannot change' })
  update(@CurrentActor() actor: Actor, @Param('id', ParseIdPipe) id: number, @Body() dto: UpdateAttributeDto) {
    return this.definitions.updateField(id, { ...dto }, actor);
  }

  @DeletionRoute('attributes/:id', 'the field and all its values are gone')
  @ApiOperation({ operationId: 'FieldDefinitionsController_delete', summary: 'Delete a field and its values' })
  async delete(@CurrentActor() actor: Actor, @Param('id', ParseIdPipe) id: number) {
    await this.definitions.deleteField(id, actor);
    return deleted(id);
  }
}

@ApiTags('models')
@WorkspaceRoutes()
@Controller()
export class ModelsController {
  constructor(private readonly definitions: FieldDefinitionsService) {}

  @Get('projects/:id/models')
  @ApiOperation({ operationId: 'ModelsController_list', summary: "List a project's models" })
  @ApiOkResponse({ type: [ModelDto] })
  list(@CurrentActor() actor: Actor, @Param('id', ParseIdPipe) id: number, @Query() _query: NoQueryDto) {
    return this.definitions.listModels(id, actor);
  }

  @Post('projects/:id/models')
  @ApiOperation({ operationId: 'ModelsController_create', summary: 'Create a model in a project' })
  @ApiCreatedWithLocation({ type: ModelDto })
  @Conflicts({ 'FIELDS.MODEL_NAME_TAKEN': 'a model of that name (any case) exists in the project' })
  async create(
    @CurrentActor() actor: Actor,
    @Param('id', ParseIdPipe) id: number,
    @Body() dto: CreateModelDto,
    @Res({ passthrough: true }) res: Response,
  ) {
    return created(res, '/models/', await this.definitions.createModel(id, { ...dto }, actor));
  }

  @Get('models/:id')
  @ApiOperation({ operationId: 'ModelsController_get', summary: 'Get a model' })
  @ApiOkResponse({ type: ModelDto })
  get(@CurrentActor() actor: Actor, @Param('id', ParseIdPipe) id: number) {
    return this.definitions.getModel(id, actor);
  }

  @Get('models/:id/attributes')
  @ApiOperation({ operationId: 'ModelsController_fields', summary: "List a model's fields" })
  @ApiOkResponse({ type: [AttributeDto] })
  fields(@CurrentActor() actor: Actor, @Param('id', ParseIdPipe) id: number, @Query() _query: NoQueryDto) {
    return this.definitions.listModelFields(id, actor);
  }

  @Post('models/:id/attributes')
  @ApiOperation({ operationId: 'ModelsController_createField', summary: 'Create a field in a model' })
  @ApiCreatedWithLocation({ type: AttributeDto })
  @Conflicts(NAME_TAKEN)
  async createField(
    @CurrentActor() actor: Actor,
    @Param('id', ParseIdPipe) id: number,
    @Body() dto: CreateAttributeDto,
    @Res({ passthrough: true }) res: Response,
  ) {
    return created(res, '/attributes/', await this.definitions.createModelField(id, { ...dto }, actor));
  }
}
