import type { Actor } from '../../../shared/domain/actor.js';
import type { CardState } from '../../card-hierarchy/index.js';
import type { ProjectFields } from '../../fields/index.js';
import type { GroupTypeInfo } from '../../grouping/index.js';
import type { ProjectView } from '../../workspace/index.js';

/** An entry of the card JSON's `groups`; `card_position` is the card's place in that group's column. */
export interface CardGroupView {
  id: number;
  type_id: number;
  title: string;
  card_position: number;
}

/** The card JSON of DESIGN.md §4. */
export interface CardView {
  id: number;
  ref: number;
  project_id: number;
  parent_id: number | null;
  title: string;
  state: CardState;
  is_archived: boolean;
  position: number;
  depth: number;
  model_id: number | null;
  attributes: Record<string, unknown>;
  groups: CardGroupView[];
  created_at: string;
  updated_at: string;
}

/** The group_type JSON of DESIGN.md §4 (`attribute_id`: its `group_type` field, owned by fields). */
export interface GroupTypeView {
  id: number;
  project_id: number;
  name: string;
  one_group_per_card: boolean;
  attribute_id: number;
  created_at: string;
}

/** A group type with its `group_type` field. */
export interface GroupTypeWithField extends GroupTypeInfo {
  attributeId: number;
}

/** The body of POST /cards/{id}/children. */
export interface CreateCardInput {
  title: unknown;
  /** Field name or id → value (DESIGN.md §5). */
  attributes?: unknown;
  /** A group the new card joins, last in its column. */
  group_id?: unknown;
}

/** One card of a `createMany` batch, with the cards to create under it. */
export interface NewCard {
  title: string;
  /** Field name or id → value, as on POST /cards/{id}/children. */
  attributes?: Record<string, unknown>;
  /** Groups the card joins, last in each column. */
  groupIds?: number[];
  children?: NewCard[];
}

/** A card created by `createMany`, in the shape of the request. */
export interface CreatedCard {
  id: number;
  ref: number;
  parentId: number;
  children: CreatedCard[];
}

/**
 * A batch of new cards flattened and its values parsed by `prepareMany`,
 * for `createPrepared`. Opaque.
 */
export interface PreparedCards {
  readonly projectId: number;
  /** Cards in the batch, children included. */
  readonly size: number;
}

/** Options of `createPrepared` and `openBatches`. */
export interface PreparedCardsOptions {
  /** Records the stream entries as `log` (imports). */
  system?: boolean;
  /**
   * The caller has held every field the batches' values write
   * (`FieldsApi.holdFields`, or created them) in this transaction since
   * before it read the `ProjectFields` it gave `prepareMany`: the values'
   * date fields are then not held FOR SHARE again per batch
   * (`BulkValueOptions.fieldsHeld`, which says why that is safe). An import
   * does: it holds its fields first thing in its transaction.
   */
  fieldsHeld?: boolean;
}

/**
 * Prepared batches written one after another under one parent, each as one
 * statement, in the caller's unit of work (an import's write pass), from
 * `CardsApi.openBatches`.
 */
export interface BatchSequence {
  /**
   * The batch built as one statement and not sent, or undefined when it is
   * not one: cards with groups or children, or values that cannot be written
   * along with the cards. Write those with `createPrepared`.
   */
  ready(batch: PreparedCards): ReadyBatch | undefined;
}

export interface ReadyBatch {
  /**
   * Sends the batch's statement; throws when the batch sent before it has
   * not returned yet (its refs and positions follow that one's). Resolves
   * when the statement has returned.
   */
  send(): Promise<SentBatch>;
}

/** A batch whose statement has returned: the cards, as `createMany` returns them, and the events still to publish. */
export interface SentBatch {
  created: CreatedCard[];
  /**
   * Publishes the batch's events (cards, then values; all recorded by the
   * statement). Apart from `send` so that the caller can send the next batch
   * first and publish while the database runs it; the caller must call it.
   */
  publish(): Promise<void>;
}

/**
 * Public API of the cards module: the card as the API shows it, composed
 * from card-hierarchy (tree), fields (values) and grouping (memberships).
 * Every write is one unit of work that calls the lower modules in the lock
 * order (docs/ARCHITECTURE.md, "The one lock order"); a caller's open unit
 * of work is joined.
 */
export abstract class CardsApi {
  /** The card JSON of a card the caller may read (404 otherwise). */
  abstract view(cardId: number, actor: Actor): Promise<CardView>;
  /**
   * The card JSON of many cards, in the order given (missing ones left out),
   * in a fixed number of queries. No access check: for callers that checked
   * (a listing, a search whose query only reaches the caller's projects).
   */
  abstract views(cardIds: number[]): Promise<CardView[]>;
  /** POST /cards/{id}/children: a card with `attributes` and `group_id`. */
  abstract create(parentId: number, input: CreateCardInput, actor: Actor): Promise<CardView>;
  /**
   * Creates cards (with their children) under a parent in one transaction:
   * all or nothing. Values are parsed and files fetched before it opens.
   * Each level of the tree is one bulk insert, so refs go to the given cards
   * first (in order), then to their children, and so on.
   * `system: true` records the stream entries as `log` (imports).
   */
  abstract createMany(parentId: number, cards: NewCard[], actor: Actor, options?: { system?: boolean }): Promise<CreatedCard[]>;
  /**
   * `createMany` in two halves, for a caller that writes many batches in its
   * own transaction (an import): the first parses a batch's values against
   * definitions read once (`FieldsApi.projectFields`), reading and writing
   * nothing (400 naming `cards[i]…` on a bad value), so it can run while the
   * database writes the batch before; the second writes it under a parent of
   * that project exactly as `createMany` does (the parent locked, access
   * checked on the locked row).
   */
  abstract prepareMany(projectId: number, cards: NewCard[], projectFields: ProjectFields): Promise<PreparedCards>;
  abstract createPrepared(parentId: number, batch: PreparedCards, actor: Actor, options?: PreparedCardsOptions): Promise<CreatedCard[]>;
  /**
   * `createPrepared` for a sequence of batches under one parent, in the
   * caller's unit of work: the parent is locked and access checked once,
   * here; each batch that is one statement then costs that statement only,
   * and the next can go to the database as soon as it has returned.
   */
  abstract openBatches(parentId: number, actor: Actor, options?: PreparedCardsOptions): Promise<BatchSequence>;
  /** The project's group type of that name (any case) with its field, created (with its field) when there is none. */
  abstract ensureGroupType(projectId: number, name: string, oneGroupPerCard: boolean, actor: Actor): Promise<GroupTypeWithField>;
  /** A project with its top-level card, in one transaction. */
  abstract createProject(organizationId: number, title: string, actor: Actor): Promise<ProjectView>;
}
