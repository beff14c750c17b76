import { ApiProperty } from '@nestjs/swagger';
import { IdProperty, TimeProperty } from '../../../../shared/http/api-properties.js';

/** The user JSON of DESIGN.md §3 (toUserView). */
export class UserDto {
  @IdProperty() id: number;
  @ApiProperty() username: string;
  @ApiProperty() email: string;
  @ApiProperty() display_name: string;
  @ApiProperty({ description: 'an instance admin' }) is_admin: boolean;
  @TimeProperty() created_at: string;
}

/** An API key as listed (toApiKeyView): never the key itself. */
export class ApiKeyDto {
  @IdProperty() id: number;
  @ApiProperty() name: string;
  @ApiProperty({ description: 'the first characters of the key (`cwk_…`), to tell keys apart' }) prefix: string;
  @TimeProperty() created_at: string;
  @TimeProperty({ nullable: true, description: 'ISO 8601, UTC; null until the key is used' }) last_used_at: string | null;
  @TimeProperty({ nullable: true, description: 'ISO 8601, UTC; null while the key is live' }) revoked_at: string | null;
}

/** The answer of POST /me/api-keys: the only time the key is shown. */
export class CreatedApiKeyDto extends ApiKeyDto {
  @ApiProperty({ description: 'the key, shown this once (only its hash is kept): send it as the Basic username or X-Api-Key' })
  api_key: string;
}
