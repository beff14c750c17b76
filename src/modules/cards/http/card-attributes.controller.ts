import { Body, Controller, Get, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { jsonText } from '../../../shared/http/json-text.js';
import { JSON_BODY_TYPES } from '../../../shared/http/body-limits.js';
import { formJsonObject } from '../../../shared/http/form-values.js';
import { ApiMediaSchemas } from '../../../shared/http/openapi-inputs.js';
import { RouteErrors, UPLOAD_MEMORY_SHARE } from '../../../shared/http/error-responses.js';
import type { Actor } from '../../../shared/domain/actor.js';
import { CurrentActor } from '../../../shared/http/actor.decorator.js';
import { NoQueryDto } from '../../../shared/http/list-query.dto.js';
import { ParseIdPipe } from '../../../shared/http/parse-id.pipe.js';
import { CardHierarchyApi } from '../../card-hierarchy/index.js';
import { FieldsApi } from '../../fields/index.js';
import { GroupingApi } from '../../grouping/index.js';
import { CardViewsService } from '../application/card-views.service.js';
import { SetCardValuesService } from '../application/set-card-values.service.js';
import { ATTRIBUTES_BODY_SCHEMA, MODEL_BODY_SCHEMA, POP_BODY_SCHEMA, VALUE_BODY_SCHEMA, VALUE_UPLOAD_SCHEMA } from './dto/cards.dto.js';
import { CardDto } from './dto/card-responses.dto.js';
import { ValueUpload } from './value-upload.js';
import { WorkspaceRoutes } from '../../../shared/http/scopes.decorator.js';

const CARD_RESPONSE = { type: CardDto, description: 'the whole updated card' };

/**
 * A form cannot nest: its `attributes` field, as JSON text of an object, is
 * the JSON body's `{"attributes": {...}}` (as on POST /cards/{id}/children).
 * Any other form field is the flat form's `<field name>=<value>`.
 */
function formAttributes(body: Record<string, unknown>, req: Request): Record<string, unknown> {
  if (req.is(JSON_BODY_TYPES) || typeof body?.attributes !== 'string') return body;
  return { ...body, attributes: formJsonObject({ value: body.attributes }) };
}

/**
 * Field values of a card (fields' use cases), answered with the whole card.
 * Bodies are free-form (values of any JSON type, keys named after fields), so
 * they are typed as plain objects, which the global ValidationPipe leaves
 * alone, and checked by fields.
 */
@ApiTags('cards')
@WorkspaceRoutes()
@Controller('cards')
export class CardAttributesController {
  constructor(
    private readonly hierarchy: CardHierarchyApi,
    private readonly fields: FieldsApi,
    private readonly grouping: GroupingApi,
    private readonly views: CardViewsService,
    private readonly values: SetCardValuesService,
    private readonly uploads: ValueUpload,
  ) {}

  @Post(':id/attributes')
  @HttpCode(200)
  @ApiOperation({ summary: "Set several of a card's values" })
  // Files fields among them may be given by URL.
  @RouteErrors(UPLOAD_MEMORY_SHARE)
  @ApiBody({ schema: ATTRIBUTES_BODY_SCHEMA })
  @ApiOkResponse(CARD_RESPONSE)
  async setMany(
    @CurrentActor() actor: Actor,
    @Param('id', ParseIdPipe) id: number,
    @Body() body: Record<string, unknown>,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ) {
    return jsonText(res, await this.values.set(id, { kind: 'many', body: formAttributes(body, req) }, actor));
  }

  @Post(':id/attributes/:attr')
  @HttpCode(200)
  @ApiOperation({ summary: "Set one of a card's values" })
  @ApiConsumes('application/json', 'multipart/form-data')
  @ApiBody({ schema: VALUE_BODY_SCHEMA, description: 'a files field also takes a multipart upload in the part "value"' })
  @ApiMediaSchemas({ 'multipart/form-data': VALUE_UPLOAD_SCHEMA })
  @ApiOkResponse(CARD_RESPONSE)
  async setOne(
    @CurrentActor() actor: Actor,
    @Param('id', ParseIdPipe) id: number,
    @Param('attr') attr: string,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ) {
    // A multipart body is read here (ValueUpload), and only then is `req.body` complete.
    const upload = await this.uploads.receive(req, res);
    if (!upload) return jsonText(res, await this.values.set(id, { kind: 'one', key: attr, body: req.body }, actor));
    await this.fields.setValue(id, attr, req.body, upload, actor);
    return this.views.one(id);
  }

  @Post(':id/attributes/:attr/append')
  @HttpCode(200)
  @ApiOperation({ summary: 'Add a value to a multi-valued field of a card' })
  @ApiConsumes('application/json', 'multipart/form-data')
  @ApiBody({ schema: VALUE_BODY_SCHEMA, description: 'for files also multipart, the file in the part "value"' })
  @ApiMediaSchemas({ 'multipart/form-data': VALUE_UPLOAD_SCHEMA })
  @ApiOkResponse(CARD_RESPONSE)
  async append(@CurrentActor() actor: Actor, @Param('id', ParseIdPipe) id: number, @Param('attr') attr: string, @Req() req: Request, @Res({ passthrough: true }) res: Response) {
    const upload = await this.uploads.receive(req, res);
    await this.fields.appendValue(id, attr, req.body, upload, actor);
    return this.views.one(id);
  }

  @Post(':id/attributes/:attr/pop')
  @HttpCode(200)
  @ApiOperation({ summary: 'Remove a value from a multi-valued field of a card' })
  @ApiBody({ schema: POP_BODY_SCHEMA, required: false })
  @ApiOkResponse(CARD_RESPONSE)
  async pop(
    @CurrentActor() actor: Actor,
    @Param('id', ParseIdPipe) id: number,
    @Param('attr') attr: string,
    @Body() body: Record<string, unknown> | undefined,
  ) {
    await this.fields.popValue(id, attr, body, actor);
    return this.views.one(id);
  }

  @Get(':id/attributes/:attr/choices')
  @ApiOperation({ summary: "List the values a card's field can take" })
  @ApiOkResponse({
    description: '[[value, label], …] for members, relationships, bool, likes and group_type fields; [] for others',
    schema: { type: 'array', items: { type: 'array', minItems: 2, maxItems: 2, items: {} } },
  })
  async getChoices(
    @CurrentActor() actor: Actor,
    @Param('id', ParseIdPipe) id: number,
    @Param('attr') attr: string,
    @Query() _query: NoQueryDto,
  ) {
    const { card } = await this.hierarchy.requireCard(id, actor, 'read');
    const found = await this.fields.choices(card, attr);
    return found.kind === 'group_type' ? this.grouping.groupChoices(found.groupTypeId, card) : found.choices;
  }

  @Post(':id/model')
  @HttpCode(200)
  @ApiOperation({ summary: "Set or remove a card's model" })
  @ApiBody({ schema: MODEL_BODY_SCHEMA, required: false })
  @ApiOkResponse(CARD_RESPONSE)
  async setModel(@CurrentActor() actor: Actor, @Param('id', ParseIdPipe) id: number, @Body() body: Record<string, unknown> | undefined) {
    await this.fields.setModel(id, body, actor);
    return this.views.one(id);
  }
}
