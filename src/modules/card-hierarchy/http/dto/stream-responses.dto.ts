import { ApiProperty } from '@nestjs/swagger';
import { IdProperty, TimeProperty } from '../../../../shared/http/api-properties.js';

/** A stream entry of DESIGN.md §4 and §9 (toStreamEntryView). */
export class StreamEntryDto {
  @IdProperty() id: number;
  @IdProperty() card_id: number;
  @ApiProperty({ enum: ['comment', 'activity', 'log'], description: 'comment; activity for a user action; log for system work (an import)' })
  kind: string;
  @ApiProperty({ description: 'the event name: comment.added, card.created, card.moved…' }) action: string;
  @IdProperty({ nullable: true, description: 'who did it; null when no user did' }) user_id: number | null;
  @ApiProperty({ type: 'string', nullable: true, description: "a comment's text; null for other entries" }) content: string | null;
  @ApiProperty({ type: 'object', additionalProperties: true, description: 'what changed, by action' }) data: Record<string, unknown>;
  @TimeProperty() created_at: string;
}
