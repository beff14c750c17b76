import { Body, Controller, Get, HttpCode, Param, Post, Req, UseInterceptors } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiOkResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { Request } from 'express';
import type { Actor } from '../../../shared/domain/actor.js';
import { CurrentActor } from '../../../shared/http/actor.decorator.js';
import { ParseIdPipe } from '../../../shared/http/parse-id.pipe.js';
import { CardModelService } from '../application/card-model.service.js';
import { CardValuesService } from '../application/card-values.service.js';
import { FieldChoicesService } from '../application/field-choices.service.js';
import {
  ATTRIBUTES_BODY_SCHEMA,
  MODEL_BODY_SCHEMA,
  POP_BODY_SCHEMA,
  VALUE_BODY_SCHEMA,
} from './dto/fields.dto.js';
import { UploadInterceptor, type UploadedValue } from './upload.interceptor.js';

const CARD_RESPONSE = { description: 'the whole updated card' };

function uploadOf(req: Request): UploadedValue | undefined {
  return (req as Request & { file?: UploadedValue }).file;
}

/**
 * Field values of a card. Bodies are free-form (values of any JSON type, keys
 * named after fields), so they are typed as plain objects, which the global
 * ValidationPipe leaves alone, and checked by the service.
 */
@ApiTags('cards')
@ApiSecurity('api_key')
@Controller('cards')
export class CardAttributesController {
  constructor(
    private readonly values: CardValuesService,
    private readonly choices: FieldChoicesService,
    private readonly models: CardModelService,
  ) {}

  @Post(':id/attributes')
  @HttpCode(200)
  @ApiBody({ schema: ATTRIBUTES_BODY_SCHEMA })
  @ApiOkResponse(CARD_RESPONSE)
  setMany(@CurrentActor() actor: Actor, @Param('id', ParseIdPipe) id: number, @Body() body: Record<string, unknown>) {
    return this.values.setMany(id, body, actor);
  }

  @Post(':id/attributes/:attr')
  @HttpCode(200)
  @UseInterceptors(UploadInterceptor)
  @ApiConsumes('application/json', 'multipart/form-data')
  @ApiBody({ schema: VALUE_BODY_SCHEMA, description: 'a files field also takes a multipart upload in the part "value"' })
  @ApiOkResponse(CARD_RESPONSE)
  setOne(
    @CurrentActor() actor: Actor,
    @Param('id', ParseIdPipe) id: number,
    @Param('attr') attr: string,
    @Body() body: Record<string, unknown>,
    @Req() req: Request,
  ) {
    return this.values.setOne(id, attr, body, uploadOf(req), actor);
  }

  @Post(':id/attributes/:attr/append')
  @HttpCode(200)
  @UseInterceptors(UploadInterceptor)
  @ApiConsumes('application/json', 'multipart/form-data')
  @ApiBody({ schema: VALUE_BODY_SCHEMA, description: 'for files also multipart, the file in the part "value"' })
  @ApiOkResponse(CARD_RESPONSE)
  append(
    @CurrentActor() actor: Actor,
    @Param('id', ParseIdPipe) id: number,
    @Param('attr') attr: string,
    @Body() body: Record<string, unknown>,
    @Req() req: Request,
  ) {
    return this.values.append(id, attr, body, uploadOf(req), actor);
  }

  @Post(':id/attributes/:attr/pop')
  @HttpCode(200)
  @ApiBody({ schema: POP_BODY_SCHEMA, required: false })
  @ApiOkResponse(CARD_RESPONSE)
  pop(
    @CurrentActor() actor: Actor,
    @Param('id', ParseIdPipe) id: number,
    @Param('attr') attr: string,
    @Body() body: Record<string, unknown> | undefined,
  ) {
    return this.values.pop(id, attr, body, actor);
  }

  @Get(':id/attributes/:attr/choices')
  @ApiOkResponse({
    description: '[[value, label], …] for members, relationships, bool, likes and group_type fields; [] for others',
    schema: { type: 'array', items: { type: 'array', minItems: 2, maxItems: 2, items: {} } },
  })
  getChoices(@CurrentActor() actor: Actor, @Param('id', ParseIdPipe) id: number, @Param('attr') attr: string) {
    return this.choices.choices(id, attr, actor);
  }

  @Post(':id/model')
  @HttpCode(200)
  @ApiBody({ schema: MODEL_BODY_SCHEMA, required: false })
  @ApiOkResponse(CARD_RESPONSE)
  setModel(@CurrentActor() actor: Actor, @Param('id', ParseIdPipe) id: number, @Body() body: Record<string, unknown> | undefined) {
    return this.models.setModel(id, body, actor);
  }
}
