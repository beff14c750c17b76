import type { Actor } from '../../../shared/domain/actor.js';
import type { CardSummary, CreationAlong, TouchAlong } from '../../card-hierarchy/index.js';

/** What fields needs of a card to show its values. */
export type FieldCardRef = Pick<CardSummary, 'id' | 'projectId' | 'modelId'>;

/**
 * A `group_type` field: fields owns the link to its group type
 * (`attributes.group_type_id`); grouping owns the memberships that are its value.
 */
export interface GroupTypeFieldRef {
  attributeId: number;
  projectId: number;
  name: string;
  groupTypeId: number;
}

export interface CardAttributes {
  /**
   * The `attributes` map of each card: every field the card may use, keyed by
   * name, `null` or `[]` when unset. `group_type` fields show `[]`: their
   * value is the card's groups of that type, which `cards` fills in.
   */
  byCard: Map<number, Record<string, unknown>>;
  /** The group_type fields shown on these cards. */
  groupTypeFields: GroupTypeFieldRef[];
}

export type Choice = [value: unknown, label: string];

/** Choices of a field for a card; a group_type field's are its type's groups, which grouping knows. */
export type FieldChoices = { kind: 'choices'; choices: Choice[] } | { kind: 'group_type'; groupTypeId: number };

/** A file upload as multer hands it over. */
export interface UploadedFile {
  originalname: string;
  mimetype: string;
  buffer: Buffer;
}

/**
 * Field values parsed, and files read or downloaded, before a transaction
 * opens (no row lock is held while a remote server is slow). Opaque: pass
 * it to `writeValues`.
 */
export interface PreparedValues {
  readonly projectId: number;
  /** True when there is nothing to write. */
  readonly isEmpty: boolean;
  /**
   * Gives the memory its downloaded files hold back to the process's upload
   * budget (UPLOAD_MEMORY_MAX_BYTES). Call it in a finally once the values
   * are written or will not be. The values of one `prepareValues` call share
   * one hold, so release each of them once the request is done with all.
   */
  release(): void;
}

/**
 * A project's field definitions, read once in the caller's transaction for
 * many `prepareValues` calls (an import's batches). Opaque.
 */
export interface ProjectFields {
  readonly projectId: number;
}

/**
 * Options of the bulk value writes (`writeNewValues`, `newValuesAlong`,
 * `writeValuesMany`). Each holds the date fields it writes FOR SHARE and
 * parses their values again under the options then current (one statement
 * per write with date values), unless `fieldsHeld`.
 */
export interface BulkValueOptions {
  /** Records the `card.attribute_changed` entries as `log` (imports). */
  system?: boolean;
  /**
   * The caller promises that it has held every field the values write with
   * `holdFields`, in this transaction, since before it read the definitions
   * they were prepared with (a field it created in the transaction counts as
   * held). An option change that would parse a value otherwise (a date
   * field's time taken away, its period turned on or off) then waits for the
   * caller's commit, and the others (time added) parse every prepared value
   * to itself, so holding and parsing again would change nothing.
   */
  fieldsHeld?: boolean;
}

/**
 * New cards' values written along with their creation (bulk creation): pass
 * `creation` as `CardHierarchyApi.createChildren`'s `along`, then call
 * `written` with the cards it returned, in the same transaction.
 */
export interface NewValuesAlong {
  readonly creation: CreationAlong;
  /**
   * Publishes the values' `card.attribute_changed` events (already recorded);
   * refuses cards of another project than the values', and date values their
   * fields' options no longer allow (an option change committed since they
   * were parsed: 400, one statement only when there are date values and not
   * `BulkValueOptions.fieldsHeld`).
   */
  written(cards: CardSummary[]): Promise<void>;
}

/** A request that sets field values from a JSON body (`FieldsApi.planValues`). */
export type ValueSetRequest =
  /** POST /cards/{id}/attributes: `{"attributes": {...}}` or a flat `{name: value}` object. */
  | { kind: 'many'; body: unknown }
  /** POST /cards/{id}/attributes/{name_or_id}: `{"value": v}`. */
  | { kind: 'one'; key: string; body: unknown };

/**
 * Value writes planned, not yet written: the body parsed against the card's
 * project's definitions, as read now or as remembered from an earlier set
 * of the card. Either `along` goes as `CardHierarchyApi.touchCurrent`'s
 * `along` (its guard checks that what the plan was made on still holds), or
 * `write` writes them in a transaction of its own.
 */
export interface PlannedValues {
  /** True when planned from what an earlier set read: no statement was sent, and the caller's access is not checked yet. */
  readonly remembered: boolean;
  /** The project's definitions as read (`projectFieldsSql`), for the answer's `attributes`. */
  readonly projectFields: unknown;
  /** Set when every write is a non-empty scalar value the card may hold: they can go in the guarded touch. */
  readonly along?: ValuesAlong;
  /**
   * Writes them in a transaction that locks the card first. `replan`: read
   * the card and the definitions again under the lock and parse the body
   * again (after the guarded touch touched nothing).
   */
  write(options: { replan: boolean }): Promise<void>;
}

/** `PlannedValues.along`: the values written in the guarded touch's statement. */
export interface ValuesAlong {
  readonly touch: TouchAlong;
  /** Publishes the `card.attribute_changed` events of what the statement changed (already recorded), from its `result`. */
  written(result: unknown): Promise<void>;
  /** Sets the written fields of `attributes` (the card's, as read with the touch) to what the statement stored. */
  overlay(attributes: Record<string, unknown>, result: unknown): void;
}

/** A field definition as other modules see it (an importer matching names and types). */
export interface FieldInfo {
  id: number;
  name: string;
  type: string;
  options: { time?: boolean; period?: boolean };
  /** null for a project-wide field. */
  modelId: number | null;
  /** Set for the field of a group type. */
  groupTypeId: number | null;
}

export interface ModelInfo {
  id: number;
  name: string;
}

/** A value checked by the value rules of DESIGN.md §5, or why it was refused. */
export type ParsedFieldValue = { ok: true; value: unknown } | { ok: false; message: string };

export interface GroupTypeFieldSpec {
  projectId: number;
  groupTypeId: number;
  /** Field name; unique among the project's fields (409 otherwise). */
  name: string;
}

/**
 * Public API of the fields module: field definitions, models, and the values
 * of cards' fields. Writes join the caller's unit of work. Routes that answer
 * with the whole card live in `cards`, which calls these.
 */
export abstract class FieldsApi {
  /**
   * The `attributes` of each card, in a fixed number of queries for the batch.
   * `projectFields`: what `projectFieldsSql` read for the cards' one project,
   * which spares reading the definitions again; `values`: what
   * `cardValuesSql` read for exactly these cards, which spares reading them
   * (then no query at all when the definitions are given too).
   */
  abstract attributesOf(cards: FieldCardRef[], projectFields?: unknown, values?: unknown): Promise<CardAttributes>;
  /**
   * SQL of every value of the cards whose ids are the array `cardIdsSql` (in
   * the caller's statement, e.g. `$1::bigint[]` or `ARRAY[c.id]`), read along
   * with their rows; what it returns goes to `attributesOf` as `values`.
   * `projectIdSql`: the cards' one project, when they have one; then only
   * the kinds of values its fields use are read.
   */
  abstract cardValuesSql(cardIdsSql: string, projectIdSql?: string): string;
  /**
   * SQL of a project's field definitions (`projectIdSql`: the project id in
   * the caller's statement), for a module that reads them along with its own
   * row (STYLE.md §2.6); what it returns goes to `blankAttributes`.
   */
  abstract projectFieldsSql(projectIdSql: string): string;
  /**
   * Whether what `projectFieldsSql` read holds a `group_type` field: then
   * cards of that project may show groups, and their memberships can be
   * read beside `attributesOf`. No query.
   */
  abstract hasGroupTypeFields(projectFields: unknown): boolean;
  /** The `attributes` of a card that has no values yet (just created), from what `projectFieldsSql` read: no query. */
  abstract blankAttributes(card: FieldCardRef, projectFields: unknown): Record<string, unknown>;
  /**
   * Parses objects of field values given on card creation (names or ids →
   * values) for new cards (no model) of a project, and fetches their files;
   * 400 naming `<property>.<field>` on a bad value; `undefined` writes
   * nothing. Runs outside any transaction. `projectFields`: what
   * `projectFieldsSql` read for the project, or what `projectFields` returned,
   * which spares reading them again (and then nothing is read: no statement).
   * Downloads are held against the upload memory budget (503 when it is
   * full) and against `actor`'s share of it, with the user's uploads (429
   * when it is full), until the caller releases the values
   * (`PreparedValues.release`). `actor`: the user the request acts for;
   * undefined only where no value can name a file (an import's batches).
   */
  abstract prepareValues(
    projectId: number,
    entries: Array<{ attributes: unknown; property: string }>,
    actor: Actor | undefined,
    projectFields?: unknown,
  ): Promise<PreparedValues[]>;
  /**
   * Writes prepared values on a card, in the caller's transaction (records
   * `card.attribute_changed`; `system`: as a log entry, for imports).
   */
  abstract writeValues(card: CardSummary, prepared: PreparedValues, actor: Actor, options?: { system?: boolean }): Promise<void>;
  /**
   * `writeValues` for many cards created in the caller's transaction (bulk
   * creation): scalar values in one statement per chunk, their entries as one
   * batch; sets of members, relationships and likes in bulk too (their users
   * and cards checked in one query each, one statement per kind); anything
   * else card by card. Date fields: `BulkValueOptions`.
   */
  abstract writeNewValues(
    items: Array<{ card: CardSummary; prepared: PreparedValues }>,
    actor: Actor,
    options?: BulkValueOptions,
  ): Promise<void>;
  /**
   * `writeNewValues` in the creation's own statement: the values of the
   * cards about to be created, `items[k]` for the card at place `k` of the
   * creation's entries. Undefined when there is nothing to write, or when a
   * card has a value that cannot go along (only non-empty scalar values can:
   * number, text, content, bool, date, time); then use `writeNewValues`
   * after the creation. Date fields: `BulkValueOptions`.
   */
  abstract newValuesAlong(items: PreparedValues[], actor: Actor, options?: BulkValueOptions): NewValuesAlong | undefined;
  /**
   * `writeValues` for many existing cards in the caller's transaction, which
   * holds their locks (an import updating the cards it matched): scalar values
   * in one upsert per chunk that reads what they replace, the entries of the
   * values that changed as one batch; sets of members, relationships and
   * likes in bulk too (the values they replace read in one query, only real
   * changes written and recorded); anything else card by card. Answers the
   * ids of the cards whose values changed (the caller marks them updated).
   * Date fields: `BulkValueOptions`.
   */
  abstract writeValuesMany(
    items: Array<{ card: CardSummary; prepared: PreparedValues }>,
    actor: Actor,
    options?: BulkValueOptions,
  ): Promise<Set<number>>;
  /**
   * A value set from a JSON body (POST /cards/{id}/attributes, and
   * …/attributes/{name} without an upload), planned; nothing is written yet.
   * Non-empty scalar values of a card whose set was planned before are
   * planned from what was read then (`remembered`, no statement). Otherwise,
   * or with `fresh`, the card is read with the caller's write access (404,
   * 403) and its project's definitions in one statement, and the body parsed
   * (400; 404 for an unknown field in the path). A remembered plan never
   * throws: a body it cannot plan is planned again after the read.
   */
  abstract planValues(cardId: number, request: ValueSetRequest, actor: Actor, options?: { fresh?: boolean }): Promise<PlannedValues>;
  /** POST /cards/{id}/attributes/{name_or_id}: `{"value": v}`, or an upload for a files field. */
  abstract setValue(cardId: number, key: string, body: unknown, upload: UploadedFile | undefined, actor: Actor): Promise<void>;
  /** POST …/append. */
  abstract appendValue(cardId: number, key: string, body: unknown, upload: UploadedFile | undefined, actor: Actor): Promise<void>;
  /** POST …/pop. */
  abstract popValue(cardId: number, key: string, body: unknown, actor: Actor): Promise<void>;
  /** POST /cards/{id}/model. */
  abstract setModel(cardId: number, body: unknown, actor: Actor, options?: { system?: boolean }): Promise<void>;
  /**
   * `setModel` for many cards of one team (an import's rows), in order: the
   * cards locked with the caller's write access in one statement, the
   * changed ones set in one, their `card.model_changed` entries as one batch.
   */
  abstract setModels(entries: Array<{ cardId: number; modelId: number | null }>, actor: Actor, options?: { system?: boolean }): Promise<void>;
  /** Choices of the field `key` for a card the caller may read (404 for an unknown field). */
  abstract choices(card: CardSummary, key: string): Promise<FieldChoices>;
  /** The project's definitions, for `prepareValues` of many batches (in the caller's transaction, so fields it created count). */
  abstract projectFields(projectId: number): Promise<ProjectFields>;
  /** Every field of the project, project-wide and models', id order. */
  abstract fieldsOf(projectId: number): Promise<FieldInfo[]>;
  /** The project's models, id order. */
  abstract modelsOf(projectId: number): Promise<ModelInfo[]>;
  /**
   * Checks one value against a field's rules without storing anything: the
   * parsed value (as `prepareValues` would take it) or the refusal's
   * message, which names the field. Scalar types (text, content, number,
   * bool, date, time) and likes (a vote); members and relationships take an
   * array and give its distinct entries (members: user ids and
   * `@username`s; relationships: card ids), their form and count checked
   * only: whether they exist is `memberProblems`' question, or the caller's.
   * Other types are refused.
   */
  abstract parseValue(field: { name: string; type: string; options: { time?: boolean; period?: boolean } }, input: unknown): ParsedFieldValue;
  /**
   * Whether members values may name these users (entries as `parseValue`
   * gives them), by the rule a set of a members value applies: a user of the
   * team `organizationId`. Two queries whatever their number (an import's
   * batch of rows). For each entry, in order: undefined, or why not
   * (`user @ann is not a member of this project's team`, the same whether
   * such a user exists elsewhere or not, as for `user 12`).
   */
  abstract memberProblems(organizationId: number, refs: Array<number | string>): Promise<Array<string | undefined>>;
  /**
   * Why a field could not be named `name` (too long, a control character,
   * only digits, …), or undefined: the rule of creation and rename, for a
   * caller that checks names before it creates (the importer's mapping).
   */
  abstract fieldNameProblem(name: string): string | undefined;
  /**
   * Creates a project-wide field in the caller's transaction, with the same
   * checks as POST /projects/{id}/attributes (the caller checks access).
   */
  abstract createField(projectId: number, input: { name: string; type: string; options?: unknown }): Promise<FieldInfo>;
  /**
   * Holds the fields `ids` in the caller's transaction (FOR KEY SHARE, in
   * ascending id) so that none is deleted before it ends: a deletion waits.
   * Returns the ids that no longer exist (deleted since they were read).
   */
  abstract holdFields(ids: number[]): Promise<number[]>;
  /** Cards holding one of `values` (parsed, as stored) in a scalar field: one query for the batch. */
  abstract cardsWithValues(attributeId: number, values: unknown[]): Promise<Array<{ cardId: number; value: unknown }>>;
  /**
   * The cards outside `cardIds` holding a relationship value that names one
   * of them: those a deletion of `cardIds` changes (DESIGN.md §4: the values
   * pointing at a deleted card go). Ascending id, one query.
   */
  abstract cardsNaming(cardIds: number[]): Promise<number[]>;
  /**
   * A deletion's step 4, before its cascade: removes the relationship values
   * that cards outside `cardIds` hold naming one of them, in one statement,
   * and records each list that lost entries as a `pop` by `actor`
   * (`card.attribute_changed`, one batch). The caller's transaction holds
   * `cardIds` FOR UPDATE (so no value naming them is added meanwhile) and the
   * cards `cardsNaming` found, locked as for their touch; it touches the
   * cards this answers (those changed, ascending id).
   */
  abstract removeValuesNaming(cardIds: number[], actor: Actor): Promise<number[]>;
  /** The attribute id of each group type's field. */
  abstract groupTypeFieldIds(groupTypeIds: number[]): Promise<Map<number, number>>;
  /** Creates a group type's field in the caller's transaction; returns the attribute id. */
  abstract createGroupTypeField(spec: GroupTypeFieldSpec): Promise<number>;
  /** Renames it (the group type was renamed). */
  abstract renameGroupTypeField(groupTypeId: number, name: string): Promise<void>;
  /** Removes it (the group type was deleted). */
  abstract deleteGroupTypeField(groupTypeId: number): Promise<void>;
}
