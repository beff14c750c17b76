import { AppEvent } from './app-event.js';

/**
 * Comments were written on cards of one project (one comment, or an import's
 * many), published in the transaction that writes them. Not a `CardEvent`:
 * a comment is a stream entry of its own (kind `comment`), so this event must
 * not become a second one. `commentIds[i]` is the entry id of the comment on
 * `cardIds[i]` (a card may appear more than once).
 */
export class CommentsAdded extends AppEvent {
  readonly name = 'comments.added';
  constructor(
    readonly projectId: number,
    readonly cardIds: readonly number[],
    readonly commentIds: readonly number[],
    readonly actorId: number,
  ) {
    super();
  }
}
