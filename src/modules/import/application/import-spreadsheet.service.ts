import { Injectable } from '@nestjs/common';
import type { Actor } from '../../../shared/domain/actor.js';
import { ForbiddenError, NotFoundError } from '../../../shared/domain/domain-error.js';
import { ImportCompleted } from '../../../shared/events/card.events.js';
import { EventBus } from '../../../shared/events/event-bus.js';
import { UnitOfWork } from '../../../shared/persistence/unit-of-work.js';
import { CardHierarchyApi, type CardSummary, type ProjectCardCounters } from '../../card-hierarchy/index.js';
import { CardsApi, type NewCard, type PreparedCards } from '../../cards/index.js';
import { FieldsApi, type ProjectFields } from '../../fields/index.js';
import { GroupingApi } from '../../grouping/index.js';
import { WorkspaceApi } from '../../workspace/index.js';
import { findByName, foldCase } from '../../../shared/domain/fold-case.js';
import { appendTo } from '../../../shared/domain/lists-by-key.js';
import { ImportFieldDeletedError, ImportRowsInvalidError, invalidImportInput } from '../domain/import.errors.js';
import { parseMapping, parseUpdateField, type ImportMapping, type UpdateMatch } from '../domain/import-mapping.js';
import { parseImportRequest, type ImportRequest, type ImportTarget } from '../domain/import-request.js';
import { resolveTargets, type ImportTargets, type ProjectState } from '../domain/import-targets.js';
import {
  keyText,
  RowChecker,
  type HeldGroup,
  type MatchKey,
  type ReferenceLookup,
  type RowCheckContext,
  type RowOutcome,
  type RowPlan,
} from '../domain/row-checker.js';
import { readStoredRows } from '../infrastructure/row-store.js';
import { ProjectImportLock } from '../infrastructure/project-import-lock.js';
import { UploadsRepository, type StoredUpload } from '../infrastructure/uploads.repository.js';
import { nextTurn } from '../../../shared/event-loop.js';
import { BatchPipeline, type WriteBatch } from './batch-pipeline.js';

/** The import answer (DESIGN.md §8); `created` counts row cards only. */
export interface ImportReport {
  project_id: number | null;
  created: number;
  updated: number;
  skipped: number;
  children_created: number;
}

/** Rows checked (and matched) together; also the size of each write batch. */
const BATCH_ROWS = 500;
/**
 * Rows checked in one go while a batch is being written; then the event loop
 * handles what the database answered meanwhile, so the batch's next
 * statement is not held up behind a long check (docs/PERFORMANCE.md,
 * import, fourth pass).
 */
const CHECK_SLICE_ROWS = 64;
/**
 * The write pass's value writes: log entries, and no hold of the date fields
 * again per batch (`fieldsHeld`). Every field the rows fill is held since the
 * transaction's first step (holdExistingFields, lock order step 0) or was
 * created in it, and each batch's values are parsed on definitions read after
 * that (WriteTargets.projectFields): an option change that would parse them
 * otherwise waits for the import (BulkValueOptions.fieldsHeld).
 */
const HELD_FIELDS = { system: true, fieldsHeld: true } as const;
/** Decision of a row in the check pass, read again by the write pass. */
const SKIP = -1;
const CREATE = 0;

interface Project {
  projectId: number | null;
  topLevelCardId: number | null;
  organizationId: number;
}

interface CheckResult {
  /** Per stored row: SKIP, CREATE or the id of the card it updates. */
  decisions: Float64Array;
  report: ImportReport;
  /** Group titles each context column needs, by lower-cased title. */
  groupTitles: Map<number, Map<string, string>>;
  /** The id of each card ref that relationships cells name (refs are never reused). */
  relatedCards: Map<number, number>;
}

/** One import request, parsed, with its upload and its target project. */
interface Job {
  request: ImportRequest;
  upload: StoredUpload;
  mapping: ImportMapping;
  match: UpdateMatch | null;
  project: Project;
}

/** The check pass's outcome and what it was checked against. */
interface Plan {
  targets: ImportTargets;
  ctx: RowCheckContext;
  checked: CheckResult;
}

/** What the write pass resolved before writing rows: field ids and group ids. */
interface WriteTargets {
  projectId: number;
  topLevelCardId: number;
  attributeIds: Map<number, number>;
  groupIds: Map<number, Map<string, number>>;
  /**
   * The project's field definitions once the missing ones exist, for parsing
   * each batch's values (new cards' and matched cards'): read after the
   * fields the rows fill are held (holdExistingFields), in the transaction
   * that created the others, so they stay what the values are parsed on
   * (`HELD_FIELDS`).
   */
  projectFields: ProjectFields;
}

/**
 * Step 2 of an import (DESIGN.md §8): checks every row of a discovered
 * spreadsheet first (streaming the stored rows, matching cards a batch at a
 * time), and only when all are good writes them in one transaction through
 * the other modules' APIs: rows become cards through `CardsApi.createMany`.
 */
@Injectable()
export class ImportSpreadsheetService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly uploads: UploadsRepository,
    private readonly workspace: WorkspaceApi,
    private readonly cards: CardsApi,
    private readonly hierarchy: CardHierarchyApi,
    private readonly fields: FieldsApi,
    private readonly grouping: GroupingApi,
    private readonly events: EventBus,
    private readonly importLock: ProjectImportLock,
  ) {}

  async import(body: Record<string, unknown>, actor: Actor): Promise<ImportReport> {
    const request = parseImportRequest(body);
    const upload = await this.uploads.findLive(request.discoverFileId, actor.userId);
    if (!upload) throw invalidImportInput('discover_file_id', 'no such upload of yours (uploads are kept 24 hours)');
    // A context is a group type with a field of its name: both take the fields' name rules (no control character,
    // not digits only), and grouping's; checked here so dry_run answers what the import would.
    const mapping = parseMapping(request.mapping, upload.columnCount, (name) => this.fields.fieldNameProblem(name) ?? this.grouping.groupTitleProblem(name));
    const match = parseUpdateField(request.updateField, mapping);
    const project = await this.target(request.target, actor);
    const job: Job = { request, upload, mapping, match, project };
    // Read before the check pass: what the write pass compares to tell whether cards came or went since.
    const counters = match && project.projectId !== null ? await this.hierarchy.cardCounters(project.projectId) : null;
    const planned = await this.plan(job);
    if (request.dryRun) return planned.checked.report;
    return this.uow.run(async () => {
      const { targets, ctx, checked } = await this.holdProject(job, counters, planned, actor);
      const write = await this.prepareWrite(request.target, project, targets, checked, actor);
      const childrenCreated = await this.writeRows(upload, request, new RowChecker(ctx), checked, write, actor);
      const report = { ...checked.report, project_id: write.projectId, children_created: childrenCreated };
      await this.events.publish(
        new ImportCompleted({
          cardId: write.topLevelCardId,
          projectId: write.projectId,
          actorId: actor.userId,
          system: true,
          data: { ...report, discover_file_id: upload.id, format: upload.format },
        }),
      );
      return report;
    });
  }

  /** The project's fields, contexts and models as they are now, and every row checked against them. */
  private async plan({ request, upload, mapping, match, project }: Job): Promise<Plan> {
    const state = project.projectId === null ? { fields: [], groupTypes: [], models: [] } : await this.projectState(project.projectId);
    const targets = resolveTargets(mapping, state);
    const ctx: RowCheckContext = {
      mapping,
      fields: targets.fields,
      contexts: targets.contexts,
      match,
      updateOnly: request.updateOnly,
      parseValue: (field, text) => this.fields.parseValue(field, text),
      modelIdByName: (name) => findByName(state.models, name, (m) => m.name)?.id,
      groupTitleProblem: (title) => this.grouping.groupTitleProblem(title),
    };
    const checked = await this.check(upload, request, ctx, project, targets);
    return { targets, ctx, checked };
  }

  /**
   * First in the transaction (lock order step 0): the imports into the
   * project one at a time (an advisory lock), then the project row (KEY
   * SHARE) and the caller's membership (SHARE), the caller's write access
   * checked again; into a new project, the membership in the team only. A
   * removal of the caller or a demotion to viewer that committed before is
   * refused here as the check before the transaction would have refused it
   * (400, 403); one sent after waits for the import. An import that matches
   * cards then checks its rows again, under these locks, when its check
   * pass may have decided on a project that is no longer so: it waited for
   * another import, or cards were created or deleted since (the counter row
   * changed). Two imports sent at once would otherwise both decide to
   * create a row's card, and each would write it. The new decisions hold
   * against other imports until the commit; other writers race an import as
   * they race each other (docs/IMPORT.md, "Imports at once").
   */
  private async holdProject(job: Job, counters: ProjectCardCounters | null, planned: Plan, actor: Actor): Promise<Plan> {
    const { target } = job.request;
    if (target.kind !== 'existing') {
      await this.target(target, actor);
      return planned;
    }
    const waited = await this.importLock.take(target.projectId);
    await this.target(target, actor);
    // Another import (or any request) may have created since the check pass
    // a field this one would create: checked again, the import fills it.
    if (!job.match) return (await this.fieldsCreatedSince(planned.targets, target.projectId)) ? this.plan(job) : planned;
    const now = await this.hierarchy.cardCounters(target.projectId);
    const changed = !now || !counters || now.nextRef !== counters.nextRef || now.cardCount !== counters.cardCount;
    return waited || changed ? this.plan(job) : planned;
  }

  /** Whether a field the import would create exists now (one query, and only when the import creates fields). */
  private async fieldsCreatedSince(targets: ImportTargets, projectId: number): Promise<boolean> {
    const creating = [...targets.fields.values()].filter((field) => field.attributeId === null).map((field) => foldCase(field.name));
    if (!creating.length) return false;
    const existing = new Set((await this.fields.fieldsOf(projectId)).map((field) => foldCase(field.name)));
    return creating.some((name) => existing.has(name));
  }

  /**
   * The target project, checked for write access: 400 naming the property
   * when it is not visible. In a transaction, it holds the project (KEY SHARE)
   * and the caller's membership (SHARE).
   */
  private async target(target: ImportTarget, actor: Actor): Promise<Project> {
    try {
      if (target.kind === 'new') {
        await this.workspace.requireOrganization(target.organizationId, actor, 'write');
        return { projectId: null, topLevelCardId: null, organizationId: target.organizationId };
      }
      const access = await this.workspace.requireProject(target.projectId, actor, 'write');
      return { projectId: access.projectId, topLevelCardId: access.topLevelCardId, organizationId: access.organizationId };
    } catch (error) {
      const field = target.kind === 'new' ? 'organization_id' : 'project_id';
      if (error instanceof NotFoundError) throw invalidImportInput(field, `no such ${target.kind === 'new' ? 'team' : 'project'} visible to you`);
      if (error instanceof ForbiddenError) throw new ForbiddenError(`${field}: your role does not allow writing there`);
      throw error;
    }
  }

  private async projectState(projectId: number): Promise<ProjectState> {
    const [fields, groupTypes, models] = await this.all(
      () => this.fields.fieldsOf(projectId),
      () => this.grouping.groupTypes(projectId),
      () => this.fields.modelsOf(projectId),
    );
    return { fields, groupTypes, models };
  }

  /**
   * The answers of independent reads: at once on the pool (the check pass),
   * one after the other on a transaction's one connection (the check pass
   * run again under the import's locks), where pg would only queue them.
   */
  private async all<T extends unknown[]>(...reads: { [K in keyof T]: () => Promise<T[K]> }): Promise<T> {
    if (!this.uow.inTransaction) return Promise.all(reads.map((read) => read())) as Promise<T>;
    const answers: unknown[] = [];
    for (const read of reads) answers.push(await read());
    return answers as T;
  }

  /**
   * Streams the stored rows, a chunk at a time, skipping the header when
   * asked; `first` is the place in the sheet of the chunk's first row (its
   * row number minus one).
   */
  private async *rows(upload: StoredUpload, request: ImportRequest): AsyncGenerator<{ rows: string[][]; first: number }> {
    let index = 0;
    for await (const rows of readStoredRows(upload.rowsGz)) {
      const first = index;
      index += rows.length;
      if (request.ignoreHeader && first === 0) yield { rows: rows.slice(1), first: 1 };
      else yield { rows, first };
    }
  }

  /** The check pass: every row, before anything is written. */
  private async check(
    upload: StoredUpload,
    request: ImportRequest,
    ctx: RowCheckContext,
    project: Project,
    targets: ImportTargets,
  ): Promise<CheckResult> {
    const { projectId } = project;
    const checker = new RowChecker(ctx);
    const relatedCards = new Map<number, number>();
    const decisions = new Float64Array(upload.rowCount).fill(SKIP);
    const report: ImportReport = { project_id: projectId, created: 0, updated: 0, skipped: 0, children_created: 0 };
    const groupTitles = new Map<number, Map<string, string>>();
    let batch: RowPlan[] = [];
    const flush = async () => {
      const ids = await this.matches(checker, batch, projectId, targets);
      const held = await this.checkHeldGroups(checker, batch.map((plan, i) => checker.resolveMatch(plan, ids[i])));
      const outcomes = await this.withoutPresentChildren(await this.checkReferences(checker, held, project, relatedCards));
      outcomes.forEach((outcome) => {
        if (outcome === 'skip') return void report.skipped++;
        if (!outcome.valid) return;
        decisions[outcome.row - 1] = outcome.action === 'update' ? outcome.cardId! : CREATE;
        report[outcome.action === 'update' ? 'updated' : 'created']++;
        report.children_created += outcome.children.length;
        for (const g of outcome.groups) {
          const titles = groupTitles.get(g.column) ?? groupTitles.set(g.column, new Map()).get(g.column)!;
          for (const t of g.titles) if (!titles.has(foldCase(t))) titles.set(foldCase(t), t);
        }
      });
      batch = [];
    };
    for await (const { rows, first } of this.rows(upload, request)) {
      for (let i = 0; i < rows.length; i++) {
        // A row with a bad cell goes on to matching and the reference look-ups too: the 400 lists all its problems.
        const outcome = checker.check(rows[i], first + i + 1);
        if (outcome === 'skip') report.skipped++;
        else batch.push(outcome);
        if (batch.length >= BATCH_ROWS) await flush();
      }
    }
    await flush();
    if (checker.problemCount) throw new ImportRowsInvalidError(checker.problems, checker.problemCount);
    return { decisions, report, groupTitles, relatedCards };
  }

  /**
   * Updates that would take their card into a second group of a type that
   * allows one group per card become row problems, not a 409 for the whole
   * import when it writes: the matched cards' memberships are read once per
   * batch, only when such a column is mapped.
   */
  private async checkHeldGroups(checker: RowChecker, outcomes: RowOutcome[]): Promise<RowOutcome[]> {
    const isUpdate = (o: RowOutcome): o is RowPlan => o !== 'skip' && o.action === 'update';
    const cardIds = outcomes.filter((o) => isUpdate(o) && checker.oneGroupColumns(o).length).map((o) => (o as RowPlan).cardId!);
    if (!cardIds.length) return outcomes;
    const held = new Map<number, HeldGroup[]>();
    for (const m of await this.grouping.membershipsOf(cardIds)) {
      const groups = held.get(m.cardId);
      if (groups) groups.push(m);
      else held.set(m.cardId, [m]);
    }
    return outcomes.map((o) => (isUpdate(o) ? checker.checkHeldGroups(o, held.get(o.cardId!) ?? []) : o));
  }

  /**
   * The users and card refs that a batch's members and relationships cells
   * name, looked up once for the batch (one question to the fields module,
   * whose rule a members value follows, and one to the card tree); what is
   * not found, or may not be named, becomes a problem of its cell. The
   * cards found are kept (`related`) for the write pass.
   */
  private async checkReferences(checker: RowChecker, outcomes: RowOutcome[], project: Project, related: Map<number, number>): Promise<RowOutcome[]> {
    const plans = outcomes.filter((o) => o !== 'skip');
    const members = new Set<number | string>();
    const refs = new Set<number>();
    for (const plan of plans) {
      const named = checker.references(plan);
      for (const m of named.members) members.add(m);
      for (const r of named.cards) if (!related.has(r)) refs.add(r);
    }
    if (!members.size && !refs.size) return outcomes;
    const asked = [...members];
    const [problems, cards] = await this.all(
      async () => (asked.length ? this.fields.memberProblems(project.organizationId, asked) : []),
      async () => (refs.size && project.projectId !== null ? this.hierarchy.cardsWithRefs(project.projectId, [...refs]) : []),
    );
    const problemOf = new Map(asked.map((m, i) => [m, problems[i]]));
    for (const c of cards) related.set(c.ref, c.id);
    const lookup: ReferenceLookup = { memberProblem: (ref) => problemOf.get(ref), cardId: (ref) => related.get(ref) };
    return outcomes.map((o) => (o === 'skip' ? o : checker.resolveReferences(o, lookup)));
  }

  /** A batch's plans, those that update a card without the children it already has (`presentChildren`). */
  private async withoutPresentChildren(outcomes: RowOutcome[]): Promise<RowOutcome[]> {
    const isUpdate = (o: RowOutcome): o is RowPlan => o !== 'skip' && o.action === 'update';
    const present = await this.presentChildren(outcomes.filter(isUpdate).map((plan) => ({ cardId: plan.cardId!, plan })));
    if (!present.size) return outcomes;
    return outcomes.map((o) => (isUpdate(o) ? { ...o, children: absentFrom(o.children, present.get(o.cardId!)) } : o));
  }

  /**
   * The titles of the `children` cells that the matched cards already have
   * among their children (archived ones too), by card: read once for the
   * batch, by the check pass (what the report counts) and again by the write
   * pass under the cards' locks (what it writes). A row that updates a card
   * adds only the children it lacks, so an import run again adds none
   * (docs/IMPORT.md, "Updates"). Titles compare exactly, as update_field
   * title matches cards (the cell's lines are trimmed).
   */
  private async presentChildren(updates: Array<{ cardId: number; plan: RowPlan }>): Promise<Map<number, Set<string>>> {
    const asking = updates.filter((u) => u.plan.children.length);
    if (!asking.length) return new Map();
    const titles = [...new Set(asking.flatMap((u) => u.plan.children))];
    return textsByCard((await this.hierarchy.childrenWithTitles(asking.map((u) => u.cardId), titles)).map((c) => [c.parentId, c.title]));
  }

  /**
   * The matched cards' rows without the comments their cards already have:
   * a comment by the importing user whose content is exactly the cell's
   * (trimmed) text, as children compare titles (`presentChildren`). Read
   * once for the batch by the write pass, under the cards' locks, before it
   * writes the batch's comments, only when a comment column is mapped. The
   * check pass does not read them: no count of the answer depends on
   * comments, so the dry run reports what the import does either way. A row
   * whose comment cells say the same missing text twice adds it twice, as a
   * children cell naming a missing title twice does (docs/IMPORT.md, "Updates").
   */
  private async withoutPresentComments(updates: Array<{ cardId: number; plan: RowPlan }>, actor: Actor): Promise<Array<{ cardId: number; plan: RowPlan }>> {
    const asking = updates.filter((u) => u.plan.comments.length);
    if (!asking.length) return updates;
    const contents = [...new Set(asking.flatMap((u) => u.plan.comments))];
    const found = await this.hierarchy.commentsWithContents(asking.map((u) => u.cardId), actor.userId, contents);
    const present = textsByCard(found.map((c) => [c.cardId, c.content]));
    return updates.map((u) => (present.has(u.cardId) ? { ...u, plan: { ...u.plan, comments: absentFrom(u.plan.comments, present.get(u.cardId)) } } : u));
  }

  /** The ids of the cards each plan's key matches, looked up for the whole batch at once. */
  private async matches(checker: RowChecker, plans: RowPlan[], projectId: number | null, targets: ImportTargets): Promise<number[][]> {
    const keys = plans.map((p) => checker.matchKey(p));
    if (projectId === null || keys.every((k) => k === null)) return plans.map(() => []);
    const found = await this.lookup(projectId, keys.filter((k): k is MatchKey => k !== null), targets, checker);
    return keys.map((k) => (k === null ? [] : (found.get(keyText(k)) ?? [])));
  }

  private async lookup(projectId: number, keys: MatchKey[], targets: ImportTargets, checker: RowChecker): Promise<Map<string, number[]>> {
    const found = new Map<string, number[]>();
    const add = (key: MatchKey, id: number) => appendTo(found, keyText(key), id);
    const kind = keys[0].kind;
    if (kind === 'title') {
      const titles = [...new Set(keys.map((k) => (k as { title: string }).title))];
      for (const c of await this.hierarchy.cardsWithTitles(projectId, titles)) add({ kind: 'title', title: c.title }, c.id);
    } else if (kind === 'ref') {
      const refs = [...new Set(keys.map((k) => (k as { ref: number }).ref))];
      for (const c of await this.hierarchy.cardsWithRefs(projectId, refs)) add({ kind: 'ref', ref: c.ref }, c.id);
    } else {
      const column = checker.matchColumn!;
      const attributeId = targets.fields.get(column)?.attributeId;
      if (attributeId === null || attributeId === undefined) return found; // a field still to be created holds no values
      const values = keys.map((k) => (k as { value: unknown }).value);
      for (const c of await this.fields.cardsWithValues(attributeId, values)) add({ kind: 'attribute', value: c.value }, c.cardId);
    }
    return found;
  }

  /** In the transaction, before the rows: the project, missing fields and contexts, and every group the rows join. */
  private async prepareWrite(
    target: ImportTarget,
    project: Project,
    targets: ImportTargets,
    checked: CheckResult,
    actor: Actor,
  ): Promise<WriteTargets> {
    // The lock order: the project (held by holdProject), its fields, then
    // cards. A deletion of either waits for the import.
    await this.holdExistingFields(targets);
    let { projectId, topLevelCardId } = project;
    if (target.kind === 'new') {
      const created = await this.cards.createProject(target.organizationId, target.title, actor);
      projectId = created.id;
      topLevelCardId = created.top_level_card_id;
    }
    const attributeIds = new Map<number, number>();
    for (const [column, field] of targets.fields) {
      const id = field.attributeId ?? (await this.fields.createField(projectId!, { name: field.name, type: field.type })).id;
      attributeIds.set(column, id);
    }
    const write: WriteTargets = {
      projectId: projectId!,
      topLevelCardId: topLevelCardId!,
      attributeIds,
      groupIds: new Map(),
      projectFields: await this.fields.projectFields(projectId!),
    };
    // The groups a row's card may join: those scoped at the top-level card,
    // all of a column's at once (an existing group of the same title in any
    // case, foldCase, is taken as it is stored).
    for (const [column, context] of targets.contexts) {
      const type = await this.cards.ensureGroupType(write.projectId, context.name, false, actor);
      const wanted = [...(checked.groupTitles.get(column) ?? [])];
      const groups = await this.grouping.ensureGroups(type.id, write.topLevelCardId, wanted.map(([, title]) => title), actor);
      write.groupIds.set(column, new Map(wanted.map(([key], i) => [key, groups[i].id])));
    }
    return write;
  }

  /**
   * The existing fields the rows fill, held until the import commits (a
   * deletion waits for it), first thing in the transaction: its value writes
   * would otherwise take the field's key only when their first row comes,
   * after a deletion may have started on values the import updated (a
   * deadlock), or after the field was gone (a foreign-key failure).
   */
  private async holdExistingFields(targets: ImportTargets): Promise<void> {
    const existing = [...targets.fields].filter(([, field]) => field.attributeId !== null);
    const gone = new Set(await this.fields.holdFields(existing.map(([, field]) => field.attributeId!)));
    const deleted = existing.find(([, field]) => gone.has(field.attributeId!));
    if (deleted) throw new ImportFieldDeletedError(deleted[0], deleted[1].name);
  }

  /**
   * The write pass: the same rows, checked again by a fresh checker, with the
   * check pass's decisions, written a batch at a time. Reading and checking
   * the next batch (gunzip, JSON, cell parsing, and parsing the values of
   * its new cards) overlaps with the database's work on the one before: at
   * most one batch is in the database, and the batches reach the transaction
   * in order (`BatchPipeline`). Answers the number of children created.
   */
  private async writeRows(
    upload: StoredUpload,
    request: ImportRequest,
    checker: RowChecker,
    checked: CheckResult,
    write: WriteTargets,
    actor: Actor,
  ): Promise<number> {
    const { decisions, relatedCards } = checked;
    // A new card's children are all created; a matched card's are counted as written (`updateCards`).
    let children = 0;
    // The users were checked by the check pass and are checked again as they are written (FieldsApi.writeNewValues).
    const lookup: ReferenceLookup = { memberProblem: () => undefined, cardId: (ref) => relatedCards.get(ref) };
    const pipeline = new BatchPipeline(
      () => this.cards.openBatches(write.topLevelCardId, actor, HELD_FIELDS),
      async (full, creates) => {
        children += await this.writeBatch(full, creates, write, actor);
      },
    );
    let batch: WriteBatch = { creates: [], updates: [] };
    const flush = async () => {
      const full = batch;
      batch = { creates: [], updates: [] };
      // CPU only (no statement), done while the batch before is in the database.
      const preparing = this.cards.prepareMany(write.projectId, full.creates.map((p) => this.newCard(p, write)), write.projectFields);
      await pipeline.write(full, preparing);
    };
    try {
      for await (const { rows, first } of this.rows(upload, request)) {
        for (let i = 0; i < rows.length; i++) {
          // In slices: the answers to the batch being written are handled between them.
          if (i % CHECK_SLICE_ROWS === CHECK_SLICE_ROWS - 1) await nextTurn();
          const index = first + i;
          if (decisions[index] === SKIP) continue;
          const cardId = decisions[index] === CREATE ? null : decisions[index];
          const plan = checker.resolveReferences({ ...(checker.check(rows[i], index + 1) as RowPlan), cardId }, lookup);
          if (!plan.valid) throw new Error(`row ${index + 1} passed the check pass but not the write pass`);
          if (cardId === null) {
            batch.creates.push(plan);
            children += plan.children.length;
          } else batch.updates.push({ cardId, plan });
          if (batch.creates.length + batch.updates.length < BATCH_ROWS) continue;
          await flush();
          // The embedded database remakes its kept plans here as the tables grow (nothing on PostgreSQL).
          await this.uow.betweenBatches(() => pipeline.finish());
        }
      }
      await flush();
      await pipeline.finish();
      return children;
    } catch (error) {
      // The transaction rolls back only once no statement of ours is still in the database.
      await pipeline.settled();
      throw error;
    }
  }

  /** Answers the number of children it created under the matched cards. */
  private async writeBatch(batch: WriteBatch, creates: PreparedCards, write: WriteTargets, actor: Actor): Promise<number> {
    await this.createCards(batch.creates, creates, write, actor);
    return this.updateCards(batch.updates, write, actor);
  }

  private newCard(plan: RowPlan, write: WriteTargets): NewCard {
    return {
      title: plan.title,
      attributes: this.attributesOf(plan, write),
      groupIds: this.groupIdsOf(plan, write),
      children: plan.children.map((title) => ({ title })),
    };
  }

  /** The row's values by field id, as cell text or list entries (the fields module parses them as it stores them). */
  private attributesOf(plan: RowPlan, write: WriteTargets): Record<string, unknown> | undefined {
    if (!plan.values.length) return undefined;
    const attributes: Record<string, unknown> = {};
    for (const v of plan.values) attributes[String(write.attributeIds.get(v.column))] = v.input ?? v.text;
    return attributes;
  }

  private groupIdsOf(plan: RowPlan, write: WriteTargets): number[] {
    return plan.groups.flatMap((g) => g.titles.map((t) => write.groupIds.get(g.column)!.get(foldCase(t))!));
  }

  private async createCards(plans: RowPlan[], prepared: PreparedCards, write: WriteTargets, actor: Actor): Promise<void> {
    if (!plans.length) return;
    const created = await this.cards.createPrepared(write.topLevelCardId, prepared, actor, HELD_FIELDS);
    await this.afterCards(plans.map((plan, i) => ({ cardId: created[i].id, plan })), actor);
  }

  /**
   * What the bulk paths before do not do (only when such columns are
   * mapped): the batch's models, then its comments, each in bulk, so each
   * card's comments come after its model in its stream.
   */
  private async afterCards(rows: Array<{ cardId: number; plan: RowPlan }>, actor: Actor): Promise<void> {
    const models = rows.flatMap(({ cardId, plan }) => (plan.modelId === undefined ? [] : [{ cardId, modelId: plan.modelId }]));
    if (models.length) await this.fields.setModels(models, actor, { system: true });
    const comments = rows.flatMap(({ cardId, plan }) => plan.comments.map((content) => ({ cardId, content })));
    if (comments.length) await this.hierarchy.addComments(comments, actor);
  }

  /**
   * The matched cards of a batch, in the order of a single update (card,
   * values, groups, model, comments, children), each step in bulk: the cards
   * locked in ascending id in one statement, the titles that change in one,
   * the values in one upsert, the memberships read once, the comments and
   * the children in one insert each (only those the card lacks, read now
   * that it is locked). A card is marked as changed (`updated_at`) only by what changes
   * it, as through the API (a title, a value, a model, a group joined;
   * comments and children leave it as it is), so a row that changes nothing
   * leaves its card untouched (docs/IMPORT.md, "Updates").
   */
  private async updateCards(updates: Array<{ cardId: number; plan: RowPlan }>, write: WriteTargets, actor: Actor): Promise<number> {
    if (!updates.length) return 0;
    const system = { system: true };
    const byId = new Map<number, CardSummary>();
    for (const card of await this.hierarchy.lockCards(updates.map((u) => u.cardId), actor, 'write')) byId.set(card.id, card);
    // An empty title cell (matched by ref or an attribute) leaves the title as it is.
    const retitled = updates.filter((u) => u.plan.title !== '' && byId.get(u.cardId)!.title !== u.plan.title);
    const records = await this.hierarchy.updateTitles(
      retitled.map((u) => ({ cardId: u.cardId, title: u.plan.title })),
      actor,
      system,
    );
    for (const record of records) byId.set(record.id, record);
    const withValues = updates.filter((u) => u.plan.values.length);
    if (withValues.length) {
      // Files cannot be mapped (import-mapping.ts), so preparing fetches no file. Parsed on the
      // definitions the new cards' values are (WriteTargets.projectFields): no read per batch.
      const prepared = await this.fields.prepareValues(
        write.projectId,
        withValues.map((u) => ({ attributes: this.attributesOf(u.plan, write), property: 'attributes' })),
        actor,
        write.projectFields,
      );
      // The bulk value writes record only real changes and leave updated_at to the caller: the cards whose values changed.
      const changed = await this.fields.writeValuesMany(
        withValues.map((u, i) => ({ card: byId.get(u.cardId)!, prepared: prepared[i] })),
        actor,
        HELD_FIELDS,
      );
      for (const r of records) changed.delete(r.id);
      if (changed.size) await this.hierarchy.touchMany([...changed]);
    }
    // Existing memberships stay; each card joins the groups it is not in yet.
    const joins = updates.flatMap(({ cardId, plan }) => this.groupIdsOf(plan, write).map((groupId) => ({ cardId, groupId })));
    if (joins.length) await this.grouping.addCardsToGroups(joins, actor, system);
    await this.afterCards(await this.withoutPresentComments(updates, actor), actor);
    const present = await this.presentChildren(updates);
    const children = updates.flatMap((u) => absentFrom(u.plan.children, present.get(u.cardId)).map((title) => ({ parentId: u.cardId, title })));
    if (children.length) await this.hierarchy.createChildren(children, actor, system);
    return children.length;
  }
}

/** The texts not among `present` (a cell naming a missing title twice still adds it twice, as a new card's cell does). */
function absentFrom(texts: string[], present: Set<string> | undefined): string[] {
  return present ? texts.filter((t) => !present.has(t)) : texts;
}

/** The texts of each card, from (card id, text) pairs. */
function textsByCard(pairs: Array<[number, string]>): Map<number, Set<string>> {
  const byCard = new Map<number, Set<string>>();
  for (const [cardId, text] of pairs) (byCard.get(cardId) ?? byCard.set(cardId, new Set()).get(cardId)!).add(text);
  return byCard;
}
