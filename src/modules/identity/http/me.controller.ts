import { Body, Controller, Get, Param, Post, Query } from '@nestjs/common';
import { ApiBody, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Actor } from '../../../shared/domain/actor.js';
import { CurrentActor } from '../../../shared/http/actor.decorator.js';
import { deleted, DeletionRoute } from '../../../shared/http/deletion.js';
import { Conflicts } from '../../../shared/http/error-responses.js';
import { NoQueryDto } from '../../../shared/http/list-query.dto.js';
import { ParseIdPipe } from '../../../shared/http/parse-id.pipe.js';
import { ApiKeyOnly, RequiresScope } from '../../../shared/http/scopes.decorator.js';
import { ApiKeysService, toApiKeyView } from '../application/api-keys.service.js';
import { toUserView, UsersService } from '../application/users.service.js';
import { CreateApiKeyDto } from './dto/create-api-key.dto.js';
import { AnswerHoldsSecret } from './idempotency-key.guard.js';
import { ApiKeyDto, CreatedApiKeyDto, UserDto } from './dto/identity-responses.dto.js';

@ApiTags('identity')
@ApiKeyOnly()
@Controller('me')
export class MeController {
  constructor(
    private readonly users: UsersService,
    private readonly keys: ApiKeysService,
  ) {}

  @Get()
  @ApiOperation({ operationId: 'MeController_me', summary: 'Get the authenticated user' })
  @RequiresScope('read_user')
  @ApiOkResponse({ type: UserDto, description: 'the authenticated user' })
  async me(@CurrentActor() actor: Actor) {
    return toUserView(await this.users.get(actor.userId));
  }

  @Get('api-keys')
  @ApiOperation({ operationId: 'MeController_listKeys', summary: "List the user's API keys" })
  @ApiOkResponse({ type: [ApiKeyDto], description: "the user's keys, oldest first: live ones and those revoked in the last 30 days (with `revoked_at`; a key revoked longer ago is deleted and no longer listed). Never the keys themselves" })
  async listKeys(@CurrentActor() actor: Actor, @Query() _query: NoQueryDto) {
    return (await this.keys.list(actor.userId)).map(toApiKeyView);
  }

  /** The key is in the answer once; only its hash is kept. */
  @Post('api-keys')
  @ApiOperation({ operationId: 'MeController_createKey', summary: 'Create an API key' })
  @ApiBody({ type: CreateApiKeyDto, required: false, description: 'optional: a key without a name is created from no body at all' })
  @ApiCreatedResponse({ type: CreatedApiKeyDto, description: 'the new key, with `api_key` shown this once' })
  @AnswerHoldsSecret()
  @Conflicts({ 'IDENTITY.API_KEY_LIMIT': 'the user holds as many live keys as one user may (API_KEYS_PER_USER_MAX); revoke one to create another' })
  async createKey(@CurrentActor() actor: Actor, @Body() dto: CreateApiKeyDto) {
    const { key, record } = await this.keys.create(actor.userId, dto.name ?? '');
    return { ...toApiKeyView(record), api_key: key };
  }

  @DeletionRoute('api-keys/:id', 'the key is revoked')
  @ApiOperation({ operationId: 'MeController_revokeKey', summary: 'Revoke an API key' })
  async revokeKey(@CurrentActor() actor: Actor, @Param('id', ParseIdPipe) id: number) {
    await this.keys.revoke(actor.userId, id);
    return deleted(id);
  }
}
