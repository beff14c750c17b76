import type { Actor } from '../../../shared/domain/actor.js';
import type { ListingRequest } from '../../../shared/http/cursor.js';
import type { AccessMode, Role } from '../../workspace/index.js';

export const CARD_STATES = ['undecided', 'dropped', 'accepted', 'in_progress', 'waiting', 'completed', 'closed'] as const;
export type CardState = (typeof CARD_STATES)[number];

/** A card as other modules see it. */
export interface CardSummary {
  id: number;
  projectId: number;
  organizationId: number;
  parentId: number | null;
  /** Ancestor ids, top-level card first, parent last. */
  ancestorIds: number[];
  depth: number;
  ref: number;
  title: string;
  state: CardState;
  isArchived: boolean;
  modelId: number | null;
}

/** A card row with what the card JSON shows besides the summary. */
export interface CardRecord extends CardSummary {
  position: number;
  createdAt: Date;
  updatedAt: Date;
}

export interface CardAccess {
  card: CardSummary;
  role: Role;
  /** What `alsoRead` asked for, by name (SQL of another module read in the same statement, STYLE.md §2.6). */
  read: Record<string, unknown>;
}

export interface CreateChildOptions {
  system?: boolean;
  alsoRead?: Record<string, string>;
}

/**
 * Writing along with a bulk creation (docs/ARCHITECTURE.md, "Writing
 * along"): SQL of another module that writes in the creation's own statement,
 * so the new cards' other rows cost no round trip of their own. `sql` returns
 * `WITH` items (`name AS (…)`, comma-separated) that may read the relation
 * `new_cards (card_id, project_id, ord)`, `ord` being the card's 1-based place
 * in the creation's entries, and that bind their values through `bind`
 * (which returns the parameter's placeholder). `entries` names one of those
 * items with the columns `recordAlongSql` reads (card_id, project_id, action,
 * user_id, data, ord): they are recorded after the cards' own `card.created`
 * entries, in `ord` order. The creation's own items are `r`, `input`, `base`,
 * `inserted`, `new_cards`, `created`, `recorded`: other names only.
 */
export interface CreationAlong {
  sql(bind: (value: unknown) => string): { items: string; entries: string };
}

/**
 * Bulk creations one after another under one parent, in the caller's unit of
 * work (an import's batches), from `CardHierarchyApi.openCreations`, which
 * locked the parent and checked the caller's write access once.
 */
export interface ChildCreations {
  /**
   * One creation of new last children of the parent, as `createChildren`
   * makes it (refs and positions in the order given, `card.created`
   * recorded in the statement, `along` written in it), built but not sent:
   * the caller builds the next one while the database runs the one before.
   * Titles are checked here (400).
   */
  ready(titles: unknown[], options?: { along?: CreationAlong }): ReadyCreation;
}

export interface ReadyCreation {
  /**
   * Sends the creation's statement; throws when the sequence's creation
   * before has not returned yet, since this one's refs and positions follow
   * what that one wrote. Resolves when the statement has returned.
   */
  send(): Promise<SentCreation>;
}

/** A creation whose statement has returned: its cards, in the order given, and its events still to publish. */
export interface SentCreation {
  cards: CardRecord[];
  /**
   * Publishes the cards' events (`card.created`, already recorded). Apart
   * from `send` so that the caller can send the next creation first and
   * publish while the database runs it.
   */
  publish(): Promise<void>;
}

/**
 * Writing along with a guarded touch (`CardHierarchyApi.touchCurrent`), as
 * `CreationAlong` does with a creation: `sql` returns `WITH` items that may
 * read the relation `touched (card_id, project_id)`, which holds the card's
 * row when the statement locked it and nothing when it did not (so they
 * write only then), binding their values through `bind`; `entries` names one
 * of them with the columns `recordAlongSql` reads, recorded in `ord` order,
 * and the card is touched (`updated_at`) only when it has a row: no entry,
 * no change (DESIGN.md §9), so nothing to mark; `result` is SQL of one value
 * over those items, which the statement returns (`TouchedCard.along`); and
 * `guard`, SQL over the card's row (aliased `c`), must hold for the write to
 * happen: what the writes were planned on (the card's model, its project's
 * definitions) is still so. The touch's own items are `seen`, `held`,
 * `touched`, `recorded`, `bumped` and `touched_row`: other names only.
 */
export interface TouchAlong {
  sql(bind: (value: unknown) => string): { items: string; entries: string; result: string; guard: string };
}

/** A card `touchCurrent` touched: its row as written (as listings send it), what `alsoRead` read, and `TouchAlong`'s result. */
export interface TouchedCard {
  card: CardJsonRow;
  read: Record<string, unknown>;
  along: unknown;
}

/** A card just created, and what `alsoRead` asked for. */
export interface CreatedChild {
  card: CardRecord;
  read: Record<string, unknown>;
}

/** A project's counter row: the ref its next card gets and how many cards it holds. */
export interface ProjectCardCounters {
  nextRef: number;
  cardCount: number;
}

/** A card as a choice for a relationships field. */
export interface TeamCard {
  id: number;
  title: string;
}

export interface CardChanges {
  title?: unknown;
  state?: unknown;
}

/** Where a relocation puts the card among its siblings; absent keys keep the parent or put it last. */
export interface TreeMove {
  parentId?: unknown;
  position?: number;
}

/** The card before and after a move (`after` equals `before` when nothing moved). */
export interface MovedCard {
  before: CardRecord;
  after: CardRecord;
  parentChanged: boolean;
}

/**
 * A relocation's tree part, locked by `prepareMove` and not yet written: the
 * card, its old parent, the new parent, the siblings it shifts (and
 * the subtree when the parent changes; the project's counter row too when
 * the move changes what is hidden) are held in the caller's transaction.
 */
export interface PreparedMove {
  /** The card as it is, before the move. */
  before: CardRecord;
  /** The card's ancestor ids once moved: the new parent's chain, the new parent last. */
  ancestorIds: number[];
  parentChanged: boolean;
  /** When the parent changes: the card and every descendant, ascending id (locked); otherwise []. */
  subtreeIds: number[];
}

/** A card and its subtree, locked for deletion by `prepareDeletion`. */
export interface DoomedSubtree {
  card: CardSummary;
  /** The card and every descendant, ascending id. */
  subtreeIds: number[];
}

export interface ProjectListing {
  withArchived: boolean;
  onlyIds: boolean;
  /**
   * SQL of other modules read in the page's statement (STYLE.md §2.6), by
   * name; `$1` there is the project id. The values come back in `read`.
   */
  alsoRead?: Record<string, string>;
}

/**
 * SQL of other modules over the cards a listing statement reads, by name:
 * `cardIdsSql` is a bigint[] expression of their ids in that statement
 * (those of a page include the one more card that tells whether a next page
 * exists). Evaluated once per statement, not per row.
 */
export type ListedCardsReads = (cardIdsSql: string) => Record<string, string>;

/**
 * A card as listings send it: card-hierarchy's members of the card JSON
 * (`id` … `updated_at`, DESIGN.md §4) as JSON text the database built, and
 * what the composing module needs to add the members of other modules.
 */
export interface CardJsonRow {
  id: number;
  projectId: number;
  modelId: number | null;
  /** One JSON object, `{"id":…,…,"updated_at":"…"}`, ending in its closing brace. */
  json: string;
}

/** A page of the project listing. */
export interface ProjectPage {
  /** The page's cards (empty with `onlyIds`). */
  cards: CardJsonRow[];
  ids: number[];
  /** Cards in all pages (project counters). */
  total: number;
  /** The page's last id when there is a next page (for `X-Service-NextCursor`), else null. */
  nextAfter: number | null;
  /** What `alsoRead` asked for, by name. */
  read: Record<string, unknown>;
}

/** GET /cards/{id}/children: which children, and what else their statement reads. */
export interface ChildrenListing {
  withArchived: boolean;
  /** How many children to read (with `alsoRead` and `ofListedCards`); the ids of the others come apart. */
  limit: number;
  alsoRead?: Record<string, string>;
  ofListedCards?: ListedCardsReads;
}

/** Which cards `jsonRows` keeps: those that are children of `parentId` when read (visible ones only unless `withArchived`), as `children` lists them. */
export interface ChildrenOf {
  parentId: number;
  withArchived: boolean;
}

/**
 * Public API of the card-hierarchy module: the card tree (places, refs,
 * titles, states, archive), the project counters and the card stream. It
 * knows nothing of field values or groups; `cards` composes those.
 * Writes join the caller's unit of work (and open one when there is none).
 */
export abstract class CardHierarchyApi {
  /** The card and the caller's role: 404 when the caller cannot see it, 403 when the role is too weak. */
  abstract requireCard(cardId: number, actor: Actor, mode: AccessMode, alsoRead?: Record<string, string>): Promise<CardAccess>;
  /**
   * Inside a unit of work: locks the card's row until the transaction ends
   * with the lock that touching it takes (FOR NO KEY UPDATE), without
   * touching it, and checks the caller's access on that row, in one
   * statement. The caller touches the card (`touch`) only once it has changed
   * something, so a write that changes nothing leaves `updated_at` as it was
   * (and gives the row no new version: `touchCurrent`). `alsoRead` as for
   * `requireCard`, read in that statement too.
   */
  abstract lockCardToTouch(cardId: number, actor: Actor, mode: AccessMode, alsoRead?: Record<string, string>): Promise<CardAccess>;
  /**
   * A guarded write (docs/ARCHITECTURE.md, "Guarded writes"), in a unit of
   * work (`UnitOfWork.runStatement`, which sends no BEGIN, or `run`): ONE
   * statement locks the card as a touch would only if no other transaction
   * changed its row after the statement's snapshot was taken (nor holds it
   * uncommitted and then changes it), the caller's access in `mode` holds
   * and `along`'s guard holds; it writes `along` in that statement, touches
   * the card (`updated_at`) only when `along` recorded entries (a write that
   * changes nothing leaves it), and reads `alsoRead` (SQL over the card's
   * row as it then is, aliased `c`). Every write that changes the card's
   * values or groups holds its row first and touches it, so it is either in
   * the statement's snapshot or waited for, and what the statement reads of
   * the card is current. Null when it wrote nothing (a writer got in, the
   * card is gone, access or the guard failed): the caller then takes its
   * locking path, which answers the right 404 or 403.
   */
  abstract touchCurrent(cardId: number, actor: Actor, mode: AccessMode, along: TouchAlong, alsoRead?: Record<string, string>): Promise<TouchedCard | null>;
  /**
   * One card's row with `alsoRead` (SQL over the row, aliased `c`) read
   * along, after the caller's read access is checked in the same statement
   * (404 and 403 as `requireCard`).
   */
  abstract readableRecord(cardId: number, actor: Actor, alsoRead: Record<string, string>): Promise<{ record: CardRecord; read: Record<string, unknown> }>;
  /** One card's row with `alsoRead` (SQL over the row, aliased `c`) read along; null when there is no such card. No access check. */
  abstract recordWith(cardId: number, alsoRead: Record<string, string>): Promise<{ record: CardRecord; read: Record<string, unknown> } | null>;
  /** The rows of the given cards, in the order of `cardIds` (missing ones left out). */
  abstract records(cardIds: number[]): Promise<CardRecord[]>;
  /**
   * The same as JSON rows (listings). `alsoRead`: SQL of other modules read
   * in the same statement, by name, over `$1` = the card ids (bigint[]) and
   * `$2` = `alsoReadParam` when given (not over the rows); the values come
   * back in `read`, empty when no card is found. `$1` may also hold 0s (the
   * id of no card, padding for the statement's plan), so read it as a set:
   * `= ANY($1)`. `childrenOf`: only those still children of that card as
   * `children` would list them now; one archived or moved away since its id
   * was read is left out, as a deleted one is.
   */
  abstract jsonRows(
    cardIds: number[],
    alsoRead?: Record<string, string>,
    alsoReadParam?: unknown,
    childrenOf?: ChildrenOf,
  ): Promise<{ cards: CardJsonRow[]; read: Record<string, unknown> }>;
  /**
   * The children of a card the caller may read, in position order; archived
   * ones (and those under an archived card) only with `withArchived`: the
   * first `limit` as JSON rows, and the ids of the others in `rest` (read in
   * the same statement; `jsonRows` reads them, in parts, for a listing too
   * large for one read). `alsoRead`: SQL of other modules over a child's row
   * (aliased `c`) that is the same for every child (e.g. over
   * `c.project_id`), and `ofListedCards` (over the ids of the `limit`
   * children read), read in the children's statement; back in `read`.
   */
  abstract children(
    cardId: number,
    actor: Actor,
    options: ChildrenListing,
  ): Promise<{ cards: CardJsonRow[]; read: Record<string, unknown>; rest: number[] }>;
  /**
   * A page of the project listing (top-level card excluded, id order), by
   * `page` (offset) or after a keyset position; the total, and the last id
   * when a next page exists.
   */
  abstract listProject(projectId: number, actor: Actor, page: ListingRequest, options: ProjectListing): Promise<ProjectPage>;
  /**
   * Creates the last child of a card, in one statement: locks the parent,
   * checks write access on the locked row, takes the project's next ref (its
   * counter row) and records `card.created`. `system` records the entry as a
   * log (imports). Called outside a unit of work, it is a unit of its own
   * without a transaction (`UnitOfWork.runStatement`); inside one, it joins it.
   * `alsoRead` maps names to SQL of another module over the parent's row, aliased `c`
   * (`c.project_id`, `c.organization_id`), read in the statement that locks the
   * parent (STYLE.md §2.6), so a composing module saves a round trip; the
   * values come back in `read`.
   */
  abstract createChild(parentId: number, title: unknown, actor: Actor, options?: CreateChildOptions): Promise<CreatedChild>;
  /**
   * Bulk creation for imports: new last children of parents of one project,
   * in one statement, returned in the order given; the parents are locked in
   * ascending id and write access is checked once. `system` as above.
   */
  abstract createChildren(
    entries: Array<{ parentId: number; title: unknown }>,
    actor: Actor,
    options?: { system?: boolean; along?: CreationAlong },
  ): Promise<CardRecord[]>;
  /**
   * Opens a sequence of bulk creations under one parent inside the caller's
   * unit of work (it must be in one): locks the parent and checks write
   * access on the locked row now, once, for every creation of the sequence
   * (the lock holds until the transaction ends). `system` as above.
   */
  abstract openCreations(parentId: number, actor: Actor, options?: { system?: boolean }): Promise<ChildCreations>;
  /**
   * Writing along (bulk work, DESIGN.md §9): SQL that records stream entries
   * in the caller's own write statement, as a data-modifying `WITH` item.
   * `source` names a relation of that statement with the columns `card_id`,
   * `project_id`, `action` (the event name), `user_id`, `data` (the event's
   * payload, which the caller builds exactly as the event it publishes) and
   * `ord` (the entries' order). The caller then publishes those events as a
   * `CardEventBatch` with `recordedAlong`, so they are not recorded twice.
   */
  abstract recordAlongSql(source: string, options?: { system?: boolean }): string;
  /** Creates a project's top-level card (ref 0) and its counters; returns its id. */
  abstract createTopLevelCard(project: { projectId: number; organizationId: number; title: string }, actorId: number): Promise<number>;
  /** Changes title and/or state (400 on bad values); `system` records the entries as logs (imports). */
  abstract update(cardId: number, changes: CardChanges, actor: Actor, options?: { system?: boolean }): Promise<void>;
  /**
   * Bulk title change (an import updating the cards its rows matched): locks
   * the cards in ascending id, checks write access once (cards of one
   * project), sets every title in one statement, and records `card.updated`
   * for the titles that changed as one batch. Returns the cards as updated.
   */
  abstract updateTitles(entries: Array<{ cardId: number; title: unknown }>, actor: Actor, options?: { system?: boolean }): Promise<CardRecord[]>;
  /** Non-top-level cards of the project with one of these exact titles: one query for the batch. */
  abstract cardsWithTitles(projectId: number, titles: string[]): Promise<Array<{ id: number; title: string }>>;
  /**
   * The project's counter row as committed (next ref, card count), or null
   * when the project is gone. Any creation or deletion of a card of the
   * project changes it, so two reads that differ tell that cards came or went
   * in between (an import's match decisions may be stale).
   */
  abstract cardCounters(projectId: number): Promise<ProjectCardCounters | null>;
  /** Cards of the project with one of these refs: one query for the batch. */
  abstract cardsWithRefs(projectId: number, refs: number[]): Promise<Array<{ id: number; ref: number }>>;
  /**
   * The children (archived ones too) of these cards that have one of these
   * exact titles, each parent and title once: one query for the batch (an
   * import adds a matched card only the children it lacks).
   */
  abstract childrenWithTitles(parentIds: number[], titles: string[]): Promise<Array<{ parentId: number; title: string }>>;
  /**
   * The comments (stream entries of kind `comment`) by user `userId` on
   * these cards whose content is exactly one of `contents`, each card and
   * content once: one query for the batch (an import adds a matched card
   * only the comments it lacks). Served by the stream's `(card_id, id)`
   * index: it reads the entries of these cards only.
   */
  abstract commentsWithContents(cardIds: number[], userId: number, contents: string[]): Promise<Array<{ cardId: number; content: string }>>;
  /** Adds a comment (a stream entry of kind `comment`), in the caller's unit of work. */
  abstract addComment(cardId: number, content: string, actor: Actor): Promise<void>;
  /**
   * `addComment` for many cards of one team, in the given order: their write
   * access checked in one statement, the entries written in bulk (imports).
   */
  abstract addComments(entries: Array<{ cardId: number; content: string }>, actor: Actor): Promise<void>;
  /** Archives or restores a card with its subtree; the counters follow. */
  abstract setArchived(cardId: number, archived: boolean, actor: Actor): Promise<void>;
  /**
   * First step of the tree part of a relocation (inside the caller's unit of
   * work): locks the card, its old parent, the new parent, the
   * siblings whose positions the move will shift (and the subtree when the
   * parent changes), checks for a cycle, and locks the project's counter row
   * when the move will change what is hidden. Writes nothing: other modules
   * lock their rows between this and `finishMove`, before anything changes.
   */
  abstract prepareMove(cardId: number, move: TreeMove, actor: Actor): Promise<PreparedMove>;
  /** Second step: moves (positions, paths, hidden flags, totals) and records `card.moved` when the card moved. */
  abstract finishMove(prepared: PreparedMove, actor: Actor): Promise<MovedCard>;
  /**
   * First step of a deletion (inside the caller's unit of work): locks the
   * parent, the whole subtree and the later siblings (their gap closes), then
   * the project's counter row (it takes the subtree out of the totals). Other
   * modules lock their rows of the subtree between this and `finishDeletion`.
   */
  abstract prepareDeletion(cardId: number, actor: Actor): Promise<DoomedSubtree>;
  /** Second step: `card.deleted` on the parent's stream, the rows (cascading to other modules' rows), the gap. */
  abstract finishDeletion(doomed: DoomedSubtree, actor: Actor): Promise<void>;
  /** Sets the card's model association (owned by fields, stored on the card row). */
  abstract setModelId(cardId: number, modelId: number | null): Promise<void>;
  /**
   * Cards of one team locked FOR UPDATE in ascending id, with the caller's
   * access in `mode` checked in the same statement (404 and 403 as
   * `requireCard`; 404 when one of them does not exist), in the caller's
   * unit of work.
   */
  abstract lockCards(cardIds: number[], actor: Actor, mode: AccessMode): Promise<CardSummary[]>;
  /** `setModelId` for many cards the caller's transaction holds, in one statement. */
  abstract setModelIds(entries: Array<{ cardId: number; modelId: number | null }>): Promise<void>;
  /** Marks the card as changed (updated_at); locks its row until the commit. */
  abstract touch(cardId: number): Promise<void>;
  /** `touch` for many cards the caller's transaction has locked, in one statement. */
  abstract touchMany(cardIds: number[]): Promise<void>;
  /**
   * Visible (not archived, not under an archived card), non-top-level cards of
   * the team, except `exceptCardId`: by project, then ref; at most `limit`.
   */
  abstract teamCards(organizationId: number, options: { exceptCardId?: number; limit: number }): Promise<TeamCard[]>;
  /**
   * Takes FOR KEY SHARE on the given cards, in ascending id order, inside the
   * caller's transaction (it must be in one): they cannot be deleted (nor their
   * key changed) until it commits, while their other columns (titles) stay
   * writable; a tree write that shifts their positions locks them FOR UPDATE
   * first, and so waits or is waited for. Cards that no longer exist are
   * skipped. `wait: false`, for cards taken after other locks (out of the lock
   * order, where waiting could close a cycle): a card another transaction
   * holds FOR UPDATE fails the statement at once (SQLSTATE 55P03), and the
   * unit of work runs the whole unit again.
   */
  abstract lockCardsShared(cardIds: number[], options?: { wait?: boolean }): Promise<void>;
  /**
   * Takes FOR NO KEY UPDATE on the given cards, in ascending id order, inside
   * the caller's transaction: the lock the `touch` that marks them changed
   * will take, taken in step 1 of the lock order instead of at the end. A
   * use case that key-shares cards first and touches them last lets a value
   * write (a plain UPDATE of the card, which KEY SHARE does not exclude) in
   * between, and then waits for it at the touch, out of order: with the
   * value write waiting for a card that a relocation holds while it waits
   * for this use case's group type, that was a deadlock. `wait: false` as
   * for `lockCardsShared`. Missing cards are skipped.
   */
  abstract lockCardsToTouch(cardIds: number[], options?: { wait?: boolean }): Promise<void>;
  /**
   * `lockCardsShared` for the cards among `cardIds` that belong to the team
   * `organizationId` (what relationship values may name); the ids locked,
   * ascending. Other teams' cards are neither locked nor returned.
   */
  abstract lockTeamCardsShared(cardIds: number[], organizationId: number, options?: { wait?: boolean }): Promise<number[]>;
  /**
   * Ids of the card and all its descendants, ascending; [] when the card does
   * not exist. Read in the caller's transaction (uses the ancestor-ids index).
   */
  abstract subtreeIds(cardId: number): Promise<number[]>;
}
