import { Injectable } from '@nestjs/common';
import type { Actor } from '../../../shared/domain/actor.js';
import { DomainError } from '../../../shared/domain/domain-error.js';
import { unreachable } from '../../../shared/domain/unreachable.js';
import { CardAttributeChanged, CardEventBatch } from '../../../shared/events/card.events.js';
import { EventBus } from '../../../shared/events/event-bus.js';
import { UnitOfWork } from '../../../shared/persistence/unit-of-work.js';
import { CardHierarchyApi, type CardSummary } from '../../card-hierarchy/index.js';
import { IdentityApi } from '../../identity/index.js';
import { isFieldAvailable, type FieldDefinition } from '../domain/field-definition.js';
import {
  FieldNotAvailableError,
  FieldNotFoundError,
  GroupTypeFieldError,
  InvalidFieldInputError,
  InvalidValuesError,
  UnknownFieldError,
} from '../domain/fields.errors.js';
import {
  invalidValue,
  fieldTypeHandler,
  isMultiValued,
  parseListItem,
  parsePopValue,
  parseValue,
  takesOptions,
  type FileInput,
  type MemberRef,
} from '../domain/values/index.js';
import { isPlainObject } from '../domain/values/json.guards.js';
import { jsonColumn } from '../../../shared/persistence/sql.js';
import type { MemoryHold } from '../../../shared/upload-memory.js';
import type { BulkValueOptions, NewValuesAlong, PlannedValues, PreparedValues, ProjectFields, ValueSetRequest, ValuesAlong } from '../contracts/fields.api.js';
import { definitionsHeldSql, definitionsStampSql, FieldDefinitionsRepository, fieldsFromJson, projectFieldsJsonSql } from '../infrastructure/field-definitions.repository.js';
import { ValuePlanCache, type KnownDefinitions, type PlanningCard } from './value-plan.cache.js';
import { FieldValuesRepository, newScalarsAlongSql, scalarsTouchAlongSql } from '../infrastructure/field-values.repository.js';
import { AttributeValuesReader } from './attribute-values.reader.js';
import { BulkListWriter, isBulkListStorage, type ListSet } from './list-values.bulk-writer.js';
import { describeMember, memberIdsOf, NO_TEAM_CARDS, relatedIdsOf, TeamReferences, type TeamCards } from './team-references.js';
import { RelationshipTargetLocks } from './relationship-targets.js';
import { lookupField, requireBodyField } from './field-lookup.js';
import { FileBlobs } from '../files/application/file-blobs.service.js';
import { FileInputs, type PreparedFile, type UploadedFile, type UrlDownloadBudget } from '../files/application/file-inputs.service.js';

/**
 * One change to one field of a card. Values are parsed (and files turned into
 * bytes) before the transaction opens; references to users and cards are
 * checked inside it.
 */
type Write =
  | { kind: 'set'; field: FieldDefinition; value: unknown }
  | { kind: 'append'; field: FieldDefinition; item: unknown }
  | { kind: 'pop'; field: FieldDefinition; item: MemberRef | number | undefined };

/** Writes planned and files fetched for one new card, before the creation's transaction. */
export class PreparedWrites implements PreparedValues {
  constructor(
    readonly projectId: number,
    readonly writes: Write[],
    /** The downloads' share of the upload memory budget, shared by the values of one `prepare`. */
    private readonly memory?: MemoryHold,
  ) {}

  get isEmpty(): boolean {
    return this.writes.length === 0;
  }

  release(): void {
    this.memory?.release();
  }
}

/** A project's definitions read once for many `prepare` calls (FieldsApi.projectFields). */
export class ProjectFieldSet implements ProjectFields {
  constructor(
    readonly projectId: number,
    private readonly fields: FieldDefinition[],
  ) {}

  /** The definitions, for values of cards of `projectId`: a set of another project is a caller's bug. */
  of(projectId: number): FieldDefinition[] {
    if (projectId !== this.projectId) throw new Error('prepareValues takes the ProjectFields of the cards\' project');
    return this.fields;
  }
}

type ScalarSet = Extract<Write, { kind: 'set' }>;

/** A use case's writes, planned from the card and its project's definitions (parsing the body: 400s and 404s). */
type Plan = (card: PlanningCard, fields: FieldDefinition[]) => Write[];

/** The plan's writes, or undefined when it throws (a remembered plan: the error is for after the access check). */
function plannedOrNot(plan: Plan, card: PlanningCard, fields: FieldDefinition[]): Write[] | undefined {
  try {
    return plan(card, fields);
  } catch {
    return undefined;
  }
}

/** A non-null value for a scalar field the card may use: what the bulk upserts take. */
function isScalarSet(w: Write, modelId: number | null): w is ScalarSet {
  return w.kind === 'set' && w.value !== null && fieldTypeHandler(w.field.type).storage === 'scalar' && isFieldAvailable(w.field, modelId);
}

/** The cards the writes' relationship values name (sets and appends; a removal names none it writes). */
function namedCards(writes: Write[]): number[] {
  return writes.flatMap((w) => {
    if (fieldTypeHandler(w.field.type).storage !== 'relationships') return [];
    if (w.kind === 'set') return (w.value as number[] | null) ?? [];
    return w.kind === 'append' ? [w.item as number] : [];
  });
}

/** A set of a members, relationships or likes field the card may use: what `BulkListWriter` takes. */
function isListSet(w: Write, modelId: number | null): w is ScalarSet {
  return w.kind === 'set' && isBulkListStorage(w.field) && isFieldAvailable(w.field, modelId);
}

/**
 * Field values of cards: the attribute operations of the spec's "Card
 * operations" and `attributes` on card creation. A request either applies
 * every value it carries or none (one transaction; a bad value throws).
 */
@Injectable()
export class CardValuesService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly cards: CardHierarchyApi,
    private readonly references: TeamReferences,
    private readonly lists: BulkListWriter,
    private readonly identity: IdentityApi,
    private readonly definitions: FieldDefinitionsRepository,
    private readonly values: FieldValuesRepository,
    private readonly reader: AttributeValuesReader,
    private readonly fileInputs: FileInputs,
    private readonly blobs: FileBlobs,
    private readonly events: EventBus,
    private readonly known: ValuePlanCache,
  ) {}

  /** POST /cards/{id}/attributes/{name_or_id}: `{"value": v}`, or a multipart upload for a files field. */
  setOne(cardId: number, key: string, body: unknown, upload: UploadedFile | undefined, actor: Actor): Promise<void> {
    const plan = this.onePlan(key, body, upload);
    return upload ? this.runWithFiles(cardId, actor, plan) : this.run(cardId, actor, plan);
  }

  /**
   * FieldsApi.planValues. Non-empty scalar values can go in the caller's
   * guarded touch (`along`), whose guard holds only while the card's model
   * and its project's definitions stamp are those the plan was made on; any
   * other write goes through `write`, in a transaction that locks the card.
   */
  async plan(cardId: number, request: ValueSetRequest, actor: Actor, options: { fresh?: boolean } = {}): Promise<PlannedValues> {
    const plan = request.kind === 'many' ? this.manyPlan(request.body) : this.onePlan(request.key, request.body, undefined);
    const known = options.fresh ? undefined : this.known.get(cardId);
    const writes = known && plannedOrNot(plan, known.card, known.definitions.fields);
    if (known && writes) {
      // Only writes that can go in the guarded touch are planned from what is remembered.
      const remembered = this.planned(known.card, known.definitions, writes, plan, actor, true);
      if (remembered.along) return remembered;
    }
    // The card, the caller's access and the project's definitions with their stamp, in one statement.
    const { card, read } = await this.cards.requireCard(cardId, actor, 'write', {
      fields: projectFieldsJsonSql('c.project_id'),
      stamp: definitionsStampSql('c.project_id'),
    });
    const definitions = { projectFields: read.fields, fields: fieldsFromJson(read.fields), stamp: String(read.stamp) };
    this.known.remember(card, definitions);
    return this.planned(card, definitions, plan(card, definitions.fields), plan, actor, false);
  }

  private planned(card: PlanningCard, definitions: KnownDefinitions, writes: Write[], plan: Plan, actor: Actor, remembered: boolean): PlannedValues {
    const scalar = writes.every((w) => isScalarSet(w, card.modelId));
    return {
      remembered,
      projectFields: definitions.projectFields,
      along: scalar ? this.scalarsAlong(card, definitions.stamp, writes as ScalarSet[], actor) : undefined,
      write: ({ replan }) => (replan ? this.run(card.id, actor, plan) : this.writePlanned(card, writes, actor)),
    };
  }

  /** POST /cards/{id}/attributes: `{"attributes": {...}}` or a flat `{name: value}` object. */
  private manyPlan(body: unknown): Plan {
    return (card, fields) => {
      if (!isPlainObject(body)) throw new InvalidFieldInputError('attributes', 'expected a JSON object of field values');
      const keys = Object.keys(body);
      if (keys.includes('attributes') && isPlainObject(body.attributes)) {
        const extra = keys.find((k) => k !== 'attributes');
        if (extra !== undefined) {
          throw new InvalidFieldInputError(extra, 'send either {"attributes": {...}} or a flat object of field values, not both');
        }
        return this.planBatch(fields, card.modelId, body.attributes, 'attributes.');
      }
      return this.planBatch(fields, card.modelId, body, '');
    };
  }

  private onePlan(key: string, body: unknown, upload: UploadedFile | undefined): Plan {
    return (card, fields) => {
      const field = this.pathField(fields, card.modelId, key);
      if (upload) return [{ kind: 'set', field: this.filesField(field), value: [this.fileInputs.fromUpload(upload)] }];
      const value = this.valueOf(body, true);
      return [{ kind: 'set', field, value: parseValue(field, value) }];
    };
  }

  /**
   * Scalar values written in a guarded touch's statement (`PlannedValues.along`):
   * the same rows, entries and events as `applyScalars`. Its guard: the card
   * still has the model, and its project the definitions (`stamp`), that the
   * values were planned on.
   */
  private scalarsAlong(card: PlanningCard, stamp: string, writes: ScalarSet[], actor: Actor): ValuesAlong {
    const byId = new Map(writes.map((w) => [w.field.id, w]));
    // The stamp is read in the statement's snapshot, blind to an option change not yet committed:
    // the fields whose options the values were parsed on are held, and their versions compared.
    const withOptions = writes.filter((w) => takesOptions(w.field.type)).map((w) => w.field.id);
    const changes = (result: unknown) =>
      (jsonColumn<Array<[attributeId: number | string, before: unknown, after: unknown]>>(result) ?? []).map(([id, before, after]) => ({
        write: byId.get(Number(id))!,
        before,
        after,
      }));
    return {
      touch: {
        sql: (bind) => ({
          ...scalarsTouchAlongSql(bind(JSON.stringify(writes.map((w) => [w.field.id, w.value]))), bind(actor.userId)),
          guard: `c.model_id IS NOT DISTINCT FROM ${bind(card.modelId)}::bigint AND ${definitionsStampSql('c.project_id')} = ${bind(stamp)}${
            withOptions.length ? ` AND ${definitionsHeldSql(`${bind(withOptions)}::bigint[]`)}` : ''
          }`,
        }),
      },
      written: (result) =>
        this.publishChanges(
          changes(result).map((c) => ({ card, field: c.write.field, value: c.write.value, from: c.before })),
          actor,
          {},
          true,
        ),
      overlay: (attributes, result) => {
        // What the database stored (jsonb orders an object's keys its own way), as a read after the write shows it.
        for (const c of changes(result)) attributes[c.write.field.name] = c.after;
      },
    };
  }

  /** POST …/append: adds one value to a members, relationships or files field. */
  append(cardId: number, key: string, body: unknown, upload: UploadedFile | undefined, actor: Actor): Promise<void> {
    const plan: Plan = (card, fields) => {
      const field = this.pathField(fields, card.modelId, key);
      if (upload) return [{ kind: 'append', field: this.filesField(field), item: this.fileInputs.fromUpload(upload) }];
      return [{ kind: 'append', field, item: parseListItem(field, this.valueOf(body, true)) }];
    };
    return upload ? this.runWithFiles(cardId, actor, plan) : this.run(cardId, actor, plan);
  }

  /** POST …/pop: `{"value": v}` removes v; no value removes the last one. */
  pop(cardId: number, key: string, body: unknown, actor: Actor): Promise<void> {
    return this.run(cardId, actor, (card, fields) => {
      const field = this.pathField(fields, card.modelId, key);
      const value = this.valueOf(body, false);
      if (value === undefined) {
        if (field.type === 'group_type') throw new GroupTypeFieldError(field.name, field.name);
        if (!isMultiValued(field.type)) {
          throw invalidValue(field.name, `append and pop apply only to members, relationships and files fields, not ${field.type}`);
        }
        return [{ kind: 'pop', field, item: undefined }];
      }
      return [{ kind: 'pop', field, item: parsePopValue(field, value) }];
    });
  }

  /**
   * Values of new cards of a project (card creation, imports): parsed and
   * their files fetched now, before any transaction, against `actor`'s share
   * of the upload memory. `known`: the project's definitions, when the caller
   * read them along.
   */
  async prepare(
    projectId: number,
    entries: Array<{ attributes: unknown; property: string }>,
    actor: Actor | undefined,
    known?: FieldDefinition[],
  ): Promise<PreparedWrites[]> {
    const fields = known ?? (await this.definitions.fieldsOfProjects([projectId]));
    const prepared: PreparedWrites[] = [];
    let budget: UrlDownloadBudget | undefined;
    try {
      for (const entry of entries) {
        const writes = this.newCardWrites(fields, entry);
        // Only files need preparing (and a budget); an import's thousands of cards have none, and skip the await.
        if (writes.some((w) => w.field.type === 'files')) await this.prepareFiles(writes, (budget ??= this.fileInputs.downloadBudget(actor?.userId)));
        prepared.push(new PreparedWrites(projectId, writes, budget?.memory));
      }
    } catch (error) {
      // Nothing reaches the caller, who would release it.
      budget?.memory.release();
      throw error;
    }
    return prepared;
  }

  private newCardWrites(fields: FieldDefinition[], { attributes, property }: { attributes: unknown; property: string }): Write[] {
    if (attributes === undefined) return [];
    if (!isPlainObject(attributes)) throw new InvalidFieldInputError(property, 'expected an object mapping field names to values');
    return this.planBatch(fields, null, attributes, `${property}.`);
  }

  /** Writes prepared values on a card in the caller's transaction; stored files go again if it rolls back (FileBlobs.store). */
  async write(card: CardSummary, prepared: PreparedValues, actor: Actor, options: { system?: boolean } = {}): Promise<void> {
    if (!(prepared instanceof PreparedWrites) || prepared.projectId !== card.projectId) {
      throw new Error('writeValues takes what prepareValues returned for the card\'s project');
    }
    if (prepared.isEmpty) return;
    await this.apply(card, prepared.writes, actor, RelationshipTargetLocks.inCallersUnit(), options);
  }

  /**
   * Values of many cards created in the caller's transaction (imports): the
   * scalar values of all of them in one statement per chunk and their
   * `card.attribute_changed` entries as one batch (a new card has no value
   * before, so nothing needs reading first); sets of members, relationships
   * and likes in bulk too (`BulkListWriter`). Other writes go card by card.
   */
  async writeNew(items: Array<{ card: CardSummary; prepared: PreparedValues }>, actor: Actor, options: BulkValueOptions = {}): Promise<void> {
    const { scalars, lists } = await this.bulkRowsOrWrite(items, actor, options);
    const rows = await this.rowsUnderCurrentOptions(scalars, options);
    if (rows.length) {
      // The insert records the `card.attribute_changed` entries itself (writing along).
      await this.values.insertScalars(
        rows.map((r) => ({ cardId: r.card.id, attributeId: r.field.id, value: r.value })),
        actor.userId,
        this.cards.recordAlongSql('changed', options),
      );
      await this.publishChanges(rows.map((r) => ({ ...r, from: null })), actor, options, true);
    }
    await this.lists.write(lists, actor, options, true);
  }

  /**
   * Values of cards about to be created, written in the creation's statement
   * (FieldsApi.newValuesAlong): only when every value is a non-empty scalar a
   * new card may hold, as `writeNew` would write them in bulk. Date values
   * are checked against their fields' options in `written`, after the
   * statement (`rowsUnderCurrentOptions`).
   */
  newAlong(items: PreparedValues[], actor: Actor, options: BulkValueOptions = {}): NewValuesAlong | undefined {
    const rows: Array<{ ord: number; field: FieldDefinition; value: unknown }> = [];
    for (let k = 0; k < items.length; k++) {
      const prepared = items[k];
      if (!(prepared instanceof PreparedWrites)) throw new Error('newValuesAlong takes what prepareValues returned');
      if (!prepared.writes.every((w) => isScalarSet(w, null))) return undefined;
      for (const w of prepared.writes as ScalarSet[]) rows.push({ ord: k + 1, field: w.field, value: w.value });
    }
    if (!rows.length) return undefined;
    return {
      creation: {
        sql: (bind) => newScalarsAlongSql(bind(JSON.stringify(rows.map((r) => [r.ord, r.field.id, r.value]))), bind(actor.userId)),
      },
      written: async (cards) => {
        // The caller's transaction rolls back on this: values parsed for one
        // project's fields never stay on another project's cards.
        if (cards.some((card, k) => card.projectId !== (items[k] as PreparedWrites).projectId)) {
          throw new Error('bulk value writes take what prepareValues returned for the cards\' project');
        }
        // Checked after the statement, which cannot fail on it: its values' keys hold the fields' rows
        // (FOR KEY SHARE), so an option change that did not commit before it waits for this transaction.
        const current = await this.rowsUnderCurrentOptions(rows, options);
        await this.publishChanges(current.map((r) => ({ card: cards[r.ord - 1], field: r.field, value: r.value, from: null })), actor, options, true);
      },
    };
  }

  /**
   * Values of many existing cards in the caller's transaction, which holds
   * their locks (an import updating the cards it matched): the scalar values
   * in one upsert per chunk that also reads what they replace, and
   * `card.attribute_changed` for those that changed, as one batch; sets of
   * members, relationships and likes in bulk too (`BulkListWriter`). Other
   * writes go card by card. Answers the ids of the cards whose values
   * changed (a card written card by card counts as changed).
   */
  async writeMany(
    items: Array<{ card: CardSummary; prepared: PreparedValues }>,
    actor: Actor,
    options: BulkValueOptions = {},
  ): Promise<Set<number>> {
    const { scalars, lists, oneByOne } = await this.bulkRowsOrWrite(items, actor, options);
    const rows = await this.rowsUnderCurrentOptions(scalars, options);
    const changedCards = new Set(oneByOne);
    if (rows.length) {
      // The upsert records the `card.attribute_changed` entries itself (writing along).
      const changed = await this.values.replaceScalars(
        rows.map((r) => ({ cardId: r.card.id, attributeId: r.field.id, value: r.value })),
        actor.userId,
        this.cards.recordAlongSql('values_changed', options),
      );
      const byKey = new Map(rows.map((r) => [`${r.card.id}:${r.field.id}`, r]));
      await this.publishChanges(
        changed.map((c) => ({ ...byKey.get(`${c.cardId}:${c.attributeId}`)!, from: c.before })),
        actor,
        options,
        true,
      );
      for (const c of changed) changedCards.add(c.cardId);
    }
    for (const cardId of await this.lists.write(lists, actor, options, false)) changedCards.add(cardId);
    return changedCards;
  }

  /**
   * The items' writes for the bulk statements: non-null scalar values, and
   * sets of members, relationships and likes (`BulkListWriter`); an item
   * with any other write (a file, an append or a removal, a field its card
   * may not use) is written card by card here instead.
   */
  private async bulkRowsOrWrite(
    items: Array<{ card: CardSummary; prepared: PreparedValues }>,
    actor: Actor,
    options: { system?: boolean },
  ): Promise<{ scalars: Array<{ card: CardSummary; field: FieldDefinition; value: unknown }>; lists: ListSet[]; oneByOne: number[] }> {
    const scalars: Array<{ card: CardSummary; field: FieldDefinition; value: unknown }> = [];
    const lists: ListSet[] = [];
    const oneByOne: number[] = [];
    for (const { card, prepared } of items) {
      if (!(prepared instanceof PreparedWrites) || prepared.projectId !== card.projectId) {
        throw new Error('bulk value writes take what prepareValues returned for the cards\' project');
      }
      if (!prepared.writes.every((w) => isScalarSet(w, card.modelId) || isListSet(w, card.modelId))) {
        await this.write(card, prepared, actor, options);
        oneByOne.push(card.id);
        continue;
      }
      for (const w of prepared.writes) {
        if (w.kind === 'set') (isScalarSet(w, card.modelId) ? scalars : lists).push({ card, field: w.field, value: w.value });
      }
    }
    return { scalars, lists, oneByOne };
  }

  private async publishChanges(
    changes: Array<{ card: Pick<PlanningCard, 'id' | 'projectId'>; field: FieldDefinition; value: unknown; from: unknown }>,
    actor: Actor,
    options: { system?: boolean },
    recordedAlong = false,
  ): Promise<void> {
    await this.events.publish(
      new CardEventBatch(
        changes.map(
          ({ card, field, value, from }) =>
            new CardAttributeChanged({
              cardId: card.id,
              projectId: card.projectId,
              actorId: actor.userId,
              system: options.system,
              data: { attribute_id: field.id, attribute: field.name, type: field.type, operation: 'set', from, to: value },
            }),
        ),
        recordedAlong,
      ),
    );
  }

  /**
   * A use case's writes on one card. The card is locked first (as touching
   * it locks it), its project's field definitions read in that statement,
   * and the writes planned and applied in that transaction; the card is
   * touched last, only when a value changed (a write that changes nothing
   * records nothing and leaves `updated_at`). Writes of a files field go to
   * `runWithFiles` instead, since their files are fetched before any
   * transaction: the plan's first run then rolls back the lock, unseen.
   */
  private async run(cardId: number, actor: Actor, plan: Plan): Promise<void> {
    // Kept across the unit's attempts: the cards its relationship values name below the card, once known.
    const targets = RelationshipTargetLocks.afterCard({ id: cardId });
    try {
      await this.uow.run(async () => {
        await this.references.lockFirst(targets);
        // Concurrent writes to one card's values queue up on this lock.
        const { card, read } = await this.cards.lockCardToTouch(cardId, actor, 'write', { fields: projectFieldsJsonSql('c.project_id') });
        const writes = plan(card, fieldsFromJson(read.fields));
        if (writes.some((w) => w.field.type === 'files')) throw new FilesToPrepare();
        if (await this.apply(card, writes, actor, targets)) await this.cards.touch(card.id);
      });
    } catch (error) {
      if (!(error instanceof FilesToPrepare)) throw error;
      await this.runWithFiles(cardId, actor, plan);
    }
  }

  /** `run` for writes that store files (uploads, URLs to fetch): the files first, then the transaction. */
  private async runWithFiles(cardId: number, actor: Actor, plan: Plan): Promise<void> {
    // The card, the caller's access and the project's field definitions, in one statement.
    const { card, read } = await this.cards.requireCard(cardId, actor, 'write', { fields: projectFieldsJsonSql('c.project_id') });
    await this.writePlanned(card, plan(card, fieldsFromJson(read.fields)), actor);
  }

  /**
   * Writes planned from a read before any lock: their files fetched first
   * (a slow URL never holds locks), then a transaction that locks the card
   * and checks access again on the locked row. The downloads count against
   * the actor's share of the upload memory, as their uploads do.
   */
  private async writePlanned(card: PlanningCard, writes: Write[], actor: Actor): Promise<void> {
    const budget = this.fileInputs.downloadBudget(actor.userId);
    try {
      await this.prepareFiles(writes, budget);
      await this.writeLocked(card, writes, actor);
    } finally {
      budget.memory.release();
    }
  }

  /**
   * The writes in a transaction that locks the card and checks access on the
   * locked row, touching the card last if a value changed; stored files go
   * again if it rolls back (FileBlobs.store).
   */
  private async writeLocked(card: PlanningCard, writes: Write[], actor: Actor): Promise<void> {
    const targets = RelationshipTargetLocks.afterCard(card, namedCards(writes));
    await this.uow.run(async () => {
      await this.references.lockFirst(targets);
      // Concurrent writes to one card's values queue up on this lock.
      const { card: locked } = await this.cards.lockCardToTouch(card.id, actor, 'write');
      if (await this.apply(locked, writes, actor, targets, { planned: true })) await this.cards.touch(card.id);
    });
  }

  private planBatch(fields: FieldDefinition[], modelId: number | null, values: Record<string, unknown>, prefix: string): Write[] {
    const entries = Object.entries(values);
    if (!entries.length) throw new InvalidFieldInputError(prefix ? prefix.slice(0, -1) : 'attributes', 'give at least one field value');
    const seen = new Set<number>();
    const writes: Write[] = [];
    const refused: DomainError[] = [];
    for (const [key, raw] of entries) {
      try {
        const property = `${prefix}${key}`;
        const field = requireBodyField(fields, modelId, key, property);
        if (seen.has(field.id)) throw new InvalidFieldInputError(property, `field "${field.name}" is given twice`);
        seen.add(field.id);
        if (field.type === 'group_type') throw new GroupTypeFieldError(property, field.name);
        // A refused value is named by its property, as the client wrote its key (the name in another
        // case), but one keyed by id (the importer's writes, or a client's) by the field's name, which
        // says more; under the batch's prefix (`attributes.`), as an unknown key is.
        const named = { ...field, name: `${prefix}${/^\d+$/.test(key) ? field.name : key}` };
        writes.push({ kind: 'set', field, value: parseValue(named, raw) });
      } catch (error) {
        // Every refused value of the batch is listed (DESIGN.md §2), in the order given; nothing is written.
        if (!(error instanceof DomainError) || error.kind !== 'invalid' || !error.errors?.length) throw error;
        refused.push(error);
      }
    }
    if (refused.length > 1) throw new InvalidValuesError(refused);
    if (refused.length) throw refused[0];
    return writes;
  }

  /** A field named in the path: unknown → 404; another model's field → 400 (the card may not use it). */
  private pathField(fields: FieldDefinition[], modelId: number | null, key: string): FieldDefinition {
    const found = lookupField(fields, modelId, key);
    if (!found) throw new FieldNotFoundError();
    if ('unavailable' in found) throw new FieldNotAvailableError('attribute', found.unavailable.name);
    if (found.field.type === 'group_type') throw new GroupTypeFieldError(found.field.name, found.field.name);
    return found.field;
  }

  private filesField(field: FieldDefinition): FieldDefinition {
    if (field.type !== 'files') {
      throw invalidValue(field.name, `a file upload can only set a files field (this field is ${field.type})`);
    }
    return field;
  }

  /** The `value` of a single-value body; only that key is accepted. */
  private valueOf(body: unknown, required: boolean): unknown {
    if (body === undefined || body === null || (isPlainObject(body) && !Object.keys(body).length)) {
      if (required) throw new InvalidFieldInputError('value', 'is required');
      return undefined;
    }
    if (!isPlainObject(body)) throw new InvalidFieldInputError('value', 'send a JSON object {"value": …}');
    const extra = Object.keys(body).find((k) => k !== 'value');
    if (extra !== undefined) throw new InvalidFieldInputError(extra, 'is not a known property (send {"value": …})');
    if (required && body.value === undefined) throw new InvalidFieldInputError('value', 'is required');
    return body.value;
  }

  /** `budget`: what the request's file URLs may still download, shared by all its writes. */
  private async prepareFiles(writes: Write[], budget: UrlDownloadBudget): Promise<void> {
    for (const w of writes) {
      if (w.field.type !== 'files') continue;
      if (w.kind === 'set' && Array.isArray(w.value)) {
        const prepared: PreparedFile[] = [];
        for (const input of w.value as Array<FileInput | PreparedFile>) prepared.push(await this.prepareOne(w.field, input, budget));
        w.value = prepared;
      } else if (w.kind === 'append') {
        w.item = await this.prepareOne(w.field, w.item as FileInput | PreparedFile, budget);
      }
    }
  }

  private prepareOne(field: FieldDefinition, input: FileInput | PreparedFile, budget: UrlDownloadBudget): Promise<PreparedFile> {
    return 'kind' in input ? this.fileInputs.prepare(field.name, input, budget) : Promise.resolve(input);
  }

  /** Applies the writes on the card the caller's unit holds; true when a value changed (an entry was recorded). */
  private async apply(
    card: PlanningCard,
    writes: Write[],
    actor: Actor,
    targets: RelationshipTargetLocks,
    options: { system?: boolean; planned?: boolean } = {},
  ): Promise<boolean> {
    for (const w of writes) {
      if (!isFieldAvailable(w.field, card.modelId)) throw new FieldNotAvailableError(w.field.name, w.field.name);
    }
    writes = await this.underCurrentOptions(writes, options.planned === true);
    if (writes.every((w) => isScalarSet(w, card.modelId))) return this.applyScalars(card, writes as ScalarSet[], actor, options);
    // Every card the relationship values name, checked and locked in one pass before any row is written.
    const named = namedCards(writes);
    const teamCards = named.length ? await this.references.lockTeamCards(card.organizationId, named, targets) : NO_TEAM_CARDS;
    // Only the written fields' values are compared, so only those are read (their definitions are at hand).
    const shown = writes.map((w) => w.field);
    const before = await this.reader.attributesOfOne(card, shown);
    for (const w of writes) await this.applyOne(card, w, actor, teamCards);
    const after = await this.reader.attributesOfOne(card, shown);
    const changed = writes.filter((w) => JSON.stringify(before[w.field.name]) !== JSON.stringify(after[w.field.name]));
    for (const w of changed) {
      await this.events.publish(
        new CardAttributeChanged({
          cardId: card.id,
          projectId: card.projectId,
          actorId: actor.userId,
          system: options.system,
          data: { attribute_id: w.field.id, attribute: w.field.name, type: w.field.type, operation: w.kind, from: before[w.field.name], to: after[w.field.name] },
        }),
      );
    }
    return changed.length > 0;
  }

  /**
   * The writes, with the values of fields whose options decide what they
   * accept (date: time, period) checked against those options as they are
   * now. Their rows are held FOR SHARE until the transaction ends, so an
   * option change waits for this write and then finds its values
   * (FieldDefinitionsService.updateField); one that committed while this
   * waited is seen here, and a value planned on the old options is parsed
   * again under the new ones (400 when they no longer allow it).
   * `everyField`: writes planned before their transaction (`writeLocked`)
   * hold every field they write so, and a field deleted since is the 400 of
   * an unknown field (its value's foreign key would only say "not found").
   */
  private underCurrentOptions(writes: Write[], everyField: boolean): Promise<Write[]> {
    return this.heldUnderCurrentOptions(writes, (field) => everyField || takesOptions(field.type), (w, field) =>
      w.kind === 'set' ? { ...w, field, value: parseValue(field, w.value) } : { ...w, field },
    );
  }

  /**
   * `underCurrentOptions` for the sets of the bulk writes (new cards' values,
   * an import's): the date fields they write held FOR SHARE, ascending id, and
   * each of their values parsed again when its field's options changed since
   * it was (400 when they no longer allow it). No statement when no row
   * writes a date field, so a bulk write of numbers and texts costs what it
   * did, nor when the caller holds the fields (`fieldsHeld`).
   */
  private rowsUnderCurrentOptions<R extends { field: FieldDefinition; value: unknown }>(rows: R[], options: BulkValueOptions): Promise<R[]> {
    // Fields the caller holds (BulkValueOptions.fieldsHeld): updateField takes FOR UPDATE, which waits
    // for that hold, on every change `narrowsValues` says could parse a value otherwise.
    if (options.fieldsHeld) return Promise.resolve(rows);
    return this.heldUnderCurrentOptions(rows, (field) => takesOptions(field.type), (r, field) => ({ ...r, field, value: parseValue(field, r.value) }));
  }

  /**
   * The two above: FOR SHARE, ascending id, on the fields of the items that
   * `held` picks, until the transaction ends (an option change waits for it:
   * FieldDefinitionsService.updateField); an item whose field's options
   * changed since it was read is made again (`reparse`) with the field as it
   * is now; 400 for a field deleted since. No statement when none is picked.
   */
  private async heldUnderCurrentOptions<T extends { field: FieldDefinition }>(
    items: T[],
    held: (field: FieldDefinition) => boolean,
    reparse: (item: T, field: FieldDefinition) => T,
  ): Promise<T[]> {
    const ids = [...new Set(items.filter((i) => held(i.field)).map((i) => i.field.id))];
    if (!ids.length) return items;
    const current = new Map((await this.definitions.shareLock(ids)).map((f) => [f.id, f]));
    return items.map((item) => {
      if (!held(item.field)) return item;
      const now = current.get(item.field.id);
      if (!now) throw new UnknownFieldError(item.field.name, item.field.name);
      return JSON.stringify(now.options) === JSON.stringify(item.field.options) ? item : reparse(item, now);
    });
  }

  /**
   * Only non-null scalar values (the usual write: a number, a text, a date):
   * one upsert that returns what each value replaced, instead of reading the
   * fields before and after. A scalar's view is its stored JSON, so `from` is
   * what was stored and `to` what is written; unchanged values write nothing
   * and record nothing, as the general path does.
   */
  private async applyScalars(card: PlanningCard, writes: ScalarSet[], actor: Actor, options: { system?: boolean }): Promise<boolean> {
    // The upsert records the `card.attribute_changed` entries itself (writing along).
    const changed = await this.values.replaceScalars(
      writes.map((w) => ({ cardId: card.id, attributeId: w.field.id, value: w.value })),
      actor.userId,
      this.cards.recordAlongSql('values_changed', options),
    );
    const before = new Map(changed.map((c) => [c.attributeId, c.before]));
    await this.publishChanges(
      writes.filter((w) => before.has(w.field.id)).map((w) => ({ card, field: w.field, value: w.value, from: before.get(w.field.id) })),
      actor,
      options,
      true,
    );
    return changed.length > 0;
  }

  /** One writer per kind of storage (FieldTypeHandler.storage). */
  private async applyOne(card: PlanningCard, w: Write, actor: Actor, teamCards: TeamCards): Promise<void> {
    const { field } = w;
    const notAList = () => invalidValue(field.name, 'append and pop apply only to members, relationships and files fields');
    const storage = fieldTypeHandler(field.type).storage;
    switch (storage) {
      case 'groups':
        throw new GroupTypeFieldError(field.name, field.name);
      case 'scalar':
        if (w.kind !== 'set') throw notAList();
        return this.values.setScalar(card.id, field.id, w.value);
      case 'likes':
        if (w.kind !== 'set') throw notAList();
        return this.values.setVote(card.id, field.id, actor.userId, (w.value as number | null) ?? 0);
      case 'members':
        return this.applyMembers(card, w);
      case 'relationships':
        return this.applyRelationships(card, w, teamCards);
      case 'files':
        return this.applyFiles(card, w, actor);
      default:
        return unreachable(storage);
    }
  }

  private async applyMembers(card: PlanningCard, w: Write): Promise<void> {
    const { field } = w;
    if (w.kind === 'set') {
      const ids = await this.teamMembers(card, field, (w.value as MemberRef[] | null) ?? []);
      await this.values.replaceList('members', card.id, field.id, ids);
    } else if (w.kind === 'append') {
      const [id] = await this.teamMembers(card, field, [w.item as MemberRef]);
      await this.values.appendToList('members', card.id, field.id, id);
    } else {
      const id = w.item === undefined ? undefined : await this.userIdOf(field, w.item as MemberRef);
      const removed = id === null ? null : await this.values.removeFromList('members', card.id, field.id, id);
      if (removed === null) throw this.notInList(field, w.item);
    }
  }

  /** `teamCards`: the team's cards among those the writes name, locked (`apply`). */
  private async applyRelationships(card: PlanningCard, w: Write, teamCards: TeamCards): Promise<void> {
    const { field } = w;
    if (w.kind === 'set') {
      const ids = relatedIdsOf(field.name, card.id, (w.value as number[] | null) ?? [], teamCards);
      await this.values.replaceList('relationships', card.id, field.id, ids);
    } else if (w.kind === 'append') {
      const [id] = relatedIdsOf(field.name, card.id, [w.item as number], teamCards);
      await this.values.appendToList('relationships', card.id, field.id, id);
    } else {
      const removed = await this.values.removeFromList('relationships', card.id, field.id, w.item as number | undefined);
      if (removed === null) throw this.notInList(field, w.item);
    }
  }

  private async applyFiles(card: PlanningCard, w: Write, actor: Actor): Promise<void> {
    const { field } = w;
    if (w.kind === 'pop') {
      const removed = await this.values.deleteFile(card.id, field.id, w.item as number | undefined);
      if (!removed) throw this.notInList(field, w.item);
      this.blobs.sweepAfterCommit();
      return;
    }
    const files = w.kind === 'set' ? ((w.value as PreparedFile[] | null) ?? []) : [w.item as PreparedFile];
    if (w.kind === 'set') {
      await this.values.deleteFiles(card.id, field.id);
      this.blobs.sweepAfterCommit();
    }
    for (const file of files) {
      const storageKey = await this.blobs.store(file.bytes);
      await this.values.insertFile({
        organizationId: card.organizationId,
        projectId: card.projectId,
        cardId: card.id,
        attributeId: field.id,
        name: file.name,
        size: file.bytes.length,
        mimeType: file.mimeType,
        storageKey,
        createdBy: actor.userId,
      });
    }
  }

  /** Members are users of the project's team (DESIGN.md §5), by id or @username: the refs resolved in one go. */
  private async teamMembers(card: PlanningCard, field: FieldDefinition, refs: MemberRef[]): Promise<number[]> {
    return memberIdsOf(field.name, refs, await this.references.members(card.organizationId, refs));
  }

  private async userIdOf(field: FieldDefinition, ref: MemberRef): Promise<number | null> {
    if (ref.kind === 'user_id') return ref.id;
    const user = await this.identity.resolveUser(`@${ref.username}`);
    return user?.id ?? null;
  }

  private notInList(field: FieldDefinition, item: unknown): Error {
    if (item === undefined) return invalidValue(field.name, 'the field has no value to remove');
    const shown = typeof item === 'object' && item !== null ? describeMember(item as MemberRef) : String(item);
    return invalidValue(field.name, `${shown} is not among the field's values`);
  }
}

/** Thrown inside `run`'s transaction (which it rolls back) when the writes have files to fetch or store first. */
class FilesToPrepare extends Error {
  constructor() {
    super('the writes store files: they are prepared before the transaction');
  }
}
