import { firstCharacters, hasUnsafeText, longerThan, UNSAFE_TEXT_MESSAGE } from '../../../shared/domain/safe-text.js';
import { foldCase } from '../../../shared/domain/fold-case.js';
import type { RowProblem } from './import.errors.js';
import type { AttributeImportType, ImportMapping, UpdateMatch } from './import-mapping.js';

/** A project field that an attribute column fills (found in the project, or to be created). */
export interface TargetField {
  name: string;
  type: AttributeImportType;
  options: { time?: boolean; period?: boolean };
}

/** The group type a context column fills: found in the project, or to be created (`groupTypeId` null). */
export interface TargetContext {
  name: string;
  groupTypeId: number | null;
  oneGroupPerCard: boolean;
}

/** A group a matched card is in, as `checkHeldGroups` compares it. */
export interface HeldGroup {
  typeId: number;
  title: string;
}

export type ParsedCell = { ok: true; value: unknown } | { ok: false; message: string };

/**
 * What one batch's lookup found for the users and cards its members and
 * relationships cells name (`RowChecker.references`).
 */
export interface ReferenceLookup {
  /** Why a members value may not name this user (the fields module's rule), or undefined. */
  memberProblem(ref: number | string): string | undefined;
  /** The id of the project's card with this ref, or undefined. */
  cardId(ref: number): number | undefined;
}

/** What a row is matched on, as `update_field` says. */
export type MatchKey = { kind: 'title'; title: string } | { kind: 'ref'; ref: number } | { kind: 'attribute'; value: unknown };

/** What the checker needs to know about the target project; the application layer reads it in bulk. */
export interface RowCheckContext {
  mapping: ImportMapping;
  /** The field each attribute column fills, by column. */
  fields: Map<number, TargetField>;
  /** The group type each context column fills, by column. */
  contexts: Map<number, TargetContext>;
  match: UpdateMatch | null;
  updateOnly: boolean;
  /** The fields module's value rules, applied to one cell: its text, or a list cell's entries. */
  parseValue(field: TargetField, input: string | Array<string | number>): ParsedCell;
  /** A model of the project by name (any case). */
  modelIdByName(name: string): number | undefined;
  /** Why grouping would refuse a context's group title, or undefined (GroupingApi.groupTitleProblem). */
  groupTitleProblem(title: string): string | undefined;
}

/** One row's plan: what the import will do with it, once it has passed every check. */
export interface RowPlan {
  row: number;
  /**
   * False once a problem of the row is reported. The later checks (matching,
   * held groups, members and relationships) still run on such a row, so that
   * the 400 lists every problem of every row (DESIGN.md §8); it is never written.
   */
  valid: boolean;
  action: 'create' | 'update';
  /** The matched card, for updates. */
  cardId: number | null;
  title: string;
  /** The ref cell's number, when a ref column is mapped and filled. */
  ref: number | undefined;
  /**
   * Parsed values (for matching) with the cell text they came from (what is
   * written), or `input`, what is written instead: a members cell's users,
   * a relationships cell's card ids once `resolveReferences` found them.
   */
  values: Array<{ column: number; value: unknown; text: string; input?: unknown }>;
  groups: Array<{ column: number; titles: string[] }>;
  /** The model to set; undefined when no model column is mapped or its cell is empty. */
  modelId: number | undefined;
  comments: string[];
  children: string[];
}

export type RowOutcome = RowPlan | 'skip';

/** How many problems the 400 lists; `error_count` says how many there were. */
export const MAX_LISTED_PROBLEMS = 100;
const MAX_TITLE = 1024;
/**
 * Distinct groups (by title, any case) one context column may name in a
 * file: each is a group of the project, a column on its boards, so more is a
 * mistake or a hostile file, refused in the check pass (docs/IMPORT.md).
 */
export const MAX_GROUPS_PER_CONTEXT = 10_000;
const REF = /^#?\s*(\d{1,9})$/;
/** A related card's ref: as a ref cell, but never the top-level card (#0), which no card relates to. */
const RELATED_REF = /^#?\s*([1-9]\d{0,8})$/;
/** A vertical tab too: FileMaker's and classic Mac exports' line break inside a cell. */
const LINE_BREAKS = /\r\n|[\r\n\v]/;
const CONTEXT_SEPARATORS = /\r\n|[\r\n\v,]/;

function splitCell(text: string, separators: RegExp): string[] {
  return text
    .split(separators)
    .map((part) => part.trim())
    .filter(Boolean);
}

/** Case-insensitively distinct, first spelling kept. */
function distinct(values: string[]): string[] {
  const seen = new Set<string>();
  return values.filter((v) => !seen.has(foldCase(v)) && seen.add(foldCase(v)));
}

/**
 * Checks the rows of an import one by one (DESIGN.md §8): pure, so the
 * import can run it over a stream of rows, once to check all of them before
 * anything is written and once more, identically, while writing. Problems
 * name the spreadsheet's 1-based row and the 0-based mapped column.
 *
 * Matching is two steps, so that the caller can look the keys of a whole
 * batch of rows up at once: `check` gives a row's plan, `matchKey` what to
 * look it up by, and `resolveMatch` applies the rules to the cards found.
 */
export class RowChecker {
  private readonly listed: RowProblem[] = [];
  private total = 0;
  /** Cards matched so far, with the row that matched each: two rows may not update one card. */
  private readonly matched = new Map<number, number>();
  /** Keys (`keyText`) of rows that match no card and create one, with the row: a later row of the key would match both. */
  private readonly creating = new Map<string, number>();
  private rowProblems = 0;
  /** The distinct group titles (`foldCase`) each context column named so far, up to the cap. */
  private readonly groupKeys = new Map<number, Set<string>>();
  /** The trimmed mapped cells of the row being checked, by place in `mapping.columns` (reused). */
  private readonly texts: string[] = [];

  /** Whether a members or relationships column is mapped: only then has a plan references to resolve. */
  private readonly namesReferences: boolean;

  constructor(private readonly ctx: RowCheckContext) {
    this.namesReferences = [...ctx.fields.values()].some((f) => f.type === 'members' || f.type === 'relationships');
  }

  /**
   * The problems listed, by row and column: matching finds its problems a
   * batch after the cell checks, and a reader goes down the sheet.
   */
  get problems(): RowProblem[] {
    return [...this.listed].sort((a, b) => a.row - b.row || a.column - b.column);
  }

  get problemCount(): number {
    return this.total;
  }

  /** A row's plan, before matching: every action is still `create`; `valid` false when a cell has a problem. */
  check(cells: string[], row: number): RowOutcome {
    // Runs twice per row of a sheet of up to IMPORT_MAX_ROWS rows: each mapped cell is trimmed once.
    const { columns, titleColumn } = this.ctx.mapping;
    const texts = this.texts;
    let empty = true;
    for (let i = 0; i < columns.length; i++) {
      texts[i] = (cells[columns[i].column] ?? '').trim();
      if (texts[i]) empty = false;
    }
    if (empty) return 'skip';
    this.rowProblems = 0;
    const report = (column: number, message: string) => this.report(row, column, message);
    const plan: RowPlan = {
      row,
      valid: true,
      action: 'create',
      cardId: null,
      title: this.title((cells[titleColumn] ?? '').trim(), titleColumn, report, this.keepsTitle),
      ref: undefined,
      values: [],
      groups: [],
      modelId: undefined,
      comments: [],
      children: [],
    };
    for (let i = 0; i < columns.length; i++) {
      const { column, spec } = columns[i];
      const text = texts[i];
      if (!text) continue;
      // Nothing else could store it either (a title, a value, a comment).
      if (hasUnsafeText(text)) {
        report(column, UNSAFE_TEXT_MESSAGE);
        continue;
      }
      switch (spec.type) {
        case 'attribute':
          this.value(column, text, plan, report);
          break;
        case 'context':
          plan.groups.push({ column, titles: this.groupTitles(distinct(splitCell(text, CONTEXT_SEPARATORS)), column, report) });
          break;
        case 'model':
          plan.modelId = this.model(text, column, report);
          break;
        case 'comment':
          plan.comments.push(text);
          break;
        case 'children':
          plan.children.push(...this.titles(splitCell(text, LINE_BREAKS), column, report));
          break;
        case 'ref':
          plan.ref = this.ref(text, column, report);
          break;
      }
    }
    plan.valid = this.rowProblems === 0;
    return plan;
  }

  private report(row: number, column: number, message: string): void {
    this.rowProblems++;
    this.total++;
    if (this.listed.length < MAX_LISTED_PROBLEMS) this.listed.push({ row, column, message });
  }

  /**
   * Whether an empty title may wait for matching: a row matched by ref or an
   * attribute keeps its card's title (an empty cell leaves a matched card's
   * value as it is); only a row that creates needs one (`resolveCreate`).
   */
  private get keepsTitle(): boolean {
    return this.ctx.match !== null && this.ctx.match.kind !== 'title';
  }

  private title(text: string, column: number, report: (column: number, message: string) => void, mayWait = false): string {
    if (!text && !mayWait) report(column, 'the title is empty');
    else if (longerThan(text, MAX_TITLE)) report(column, `the title is longer than ${MAX_TITLE} characters`);
    return text;
  }

  private titles(titles: string[], column: number, report: (column: number, message: string) => void): string[] {
    for (const t of titles) if (longerThan(t, MAX_TITLE)) report(column, `"${firstCharacters(t, 40)}…" is longer than ${MAX_TITLE} characters`);
    return titles;
  }

  private groupTitles(titles: string[], column: number, report: (column: number, message: string) => void): string[] {
    for (const t of titles) {
      const problem = this.ctx.groupTitleProblem(t);
      if (problem) report(column, `"${t.slice(0, 40)}": ${problem}`);
    }
    const context = this.ctx.contexts.get(column)!;
    if (context.oneGroupPerCard && titles.length > 1) {
      report(column, `"${context.name}" allows one group per card, and this cell names ${titles.length}`);
    }
    this.countGroups(titles, column, context.name, report);
    return titles;
  }

  /** Reports the cell that takes its column past MAX_GROUPS_PER_CONTEXT distinct groups, once per column. */
  private countGroups(titles: string[], column: number, name: string, report: (column: number, message: string) => void): void {
    const keys = this.groupKeys.get(column) ?? this.groupKeys.set(column, new Set()).get(column)!;
    if (keys.size > MAX_GROUPS_PER_CONTEXT) return;
    for (const t of titles) keys.add(foldCase(t));
    if (keys.size > MAX_GROUPS_PER_CONTEXT) {
      report(column, `"${name}": the column names more than ${MAX_GROUPS_PER_CONTEXT} distinct groups, the most an import takes for a context`);
    }
  }

  private value(column: number, text: string, plan: RowPlan, report: (column: number, message: string) => void): void {
    const field = this.ctx.fields.get(column)!;
    if (field.type === 'members') {
      // The fields module checks each entry's form and the count, and drops repeats.
      const parsed = this.ctx.parseValue(field, splitCell(text, CONTEXT_SEPARATORS));
      if (parsed.ok) plan.values.push({ column, value: parsed.value, text, input: parsed.value });
      else report(column, parsed.message);
      return;
    }
    if (field.type === 'relationships') return this.relatedRefs(column, text, field, plan, report);
    const parsed = this.ctx.parseValue(field, text);
    if (parsed.ok) plan.values.push({ column, value: parsed.value, text });
    else report(column, parsed.message);
  }

  /** A relationships cell: card refs as a ref cell takes them (5 or #5), separated as a context's groups. */
  private relatedRefs(column: number, text: string, field: TargetField, plan: RowPlan, report: (column: number, message: string) => void): void {
    const refs: number[] = [];
    for (const item of splitCell(text, CONTEXT_SEPARATORS)) {
      const m = RELATED_REF.exec(item);
      // One problem per cell: a cell of thousands of bad entries is one mistake.
      if (!m) return report(column, `${field.name}: "${item.slice(0, 40)}" is not a card ref such as 5 or #5`);
      refs.push(Number(m[1]));
    }
    // The count and the repeats, by the fields module's rules for a relationships value.
    const parsed = this.ctx.parseValue(field, refs);
    if (parsed.ok) plan.values.push({ column, value: parsed.value, text });
    else report(column, parsed.message);
  }

  private model(text: string, column: number, report: (column: number, message: string) => void): number | undefined {
    const id = this.ctx.modelIdByName(text);
    if (id === undefined) report(column, `the project has no model named "${text.slice(0, 100)}"`);
    return id;
  }

  private ref(text: string, column: number, report: (column: number, message: string) => void): number | undefined {
    const m = REF.exec(text);
    if (!m) report(column, 'a ref is a card number such as 5 or #5');
    return m ? Number(m[1]) : undefined;
  }

  /** The users and card refs a plan's members and relationships cells name: what its batch looks up once. */
  references(plan: RowPlan): { members: Array<number | string>; cards: number[] } {
    const found = { members: [] as Array<number | string>, cards: [] as number[] };
    for (const v of plan.values) {
      const type = this.ctx.fields.get(v.column)!.type;
      if (type === 'members') found.members.push(...(v.value as Array<number | string>));
      else if (type === 'relationships') found.cards.push(...(v.value as number[]));
    }
    return found;
  }

  /**
   * A plan's members and relationships cells against what their batch's
   * lookup found: an unknown user, a user outside the team, an unknown card
   * ref, or the card itself (an update) is a problem of the cell (the first
   * one, with how many more); the relationships' card ids become what is
   * written. Run after `resolveMatch`, which says which card a row updates,
   * on rows with other problems too.
   */
  resolveReferences(plan: RowPlan, lookup: ReferenceLookup): RowPlan {
    if (!this.namesReferences) return plan;
    let problems = 0;
    const values = plan.values.map((v) => {
      const field = this.ctx.fields.get(v.column)!;
      if (field.type !== 'members' && field.type !== 'relationships') return v;
      const refs = v.value as Array<number | string>;
      const ids: number[] = [];
      const bad: string[] = [];
      for (const ref of refs) {
        if (field.type === 'members') {
          const problem = lookup.memberProblem(ref);
          if (problem) bad.push(problem);
          continue;
        }
        const id = lookup.cardId(ref as number);
        if (id === undefined) bad.push(`the project has no card #${ref} (a row can relate only to cards that exist before the import)`);
        else if (id === plan.cardId) bad.push(`#${ref} is the card this row updates, and a card cannot be related to itself`);
        else ids.push(id);
      }
      if (bad.length) {
        problems++;
        this.report(plan.row, v.column, `${field.name}: ${bad[0]}${bad.length > 1 ? ` (and ${bad.length - 1} more in this cell)` : ''}`);
      }
      return field.type === 'relationships' ? { ...v, input: ids } : v;
    });
    return { ...plan, values, valid: plan.valid && !problems };
  }

  /** The column `update_field` reads, when there is one. */
  get matchColumn(): number | undefined {
    return this.ctx.match?.column;
  }

  /** What the row is looked up by; null when it has no key (an empty ref or attribute cell matches nothing). */
  matchKey(plan: RowPlan): MatchKey | null {
    const match = this.ctx.match;
    if (!match) return null;
    if (match.kind === 'title') return { kind: 'title', title: plan.title };
    if (match.kind === 'ref') return plan.ref === undefined ? null : { kind: 'ref', ref: plan.ref };
    const value = plan.values.find((v) => v.column === match.column);
    return value ? { kind: 'attribute', value: value.value } : null;
  }

  /**
   * Applies `update_field` and `update_only` given the ids of the cards that
   * `matchKey(plan)` matched. A row that matches several cards, or a card an
   * earlier row matched, stays a `create` of no card, not valid.
   */
  resolveMatch(plan: RowPlan, ids: number[]): RowOutcome {
    const match = this.ctx.match;
    if (!match) return plan;
    if (ids.length > 1) {
      this.report(plan.row, match.column, `matches ${ids.length} cards; update_field must single out one card`);
      return { ...plan, valid: false };
    }
    if (ids.length === 0) return this.ctx.updateOnly ? 'skip' : this.resolveCreate(plan);
    const earlier = this.matched.get(ids[0]);
    if (earlier !== undefined && earlier !== plan.row) {
      this.report(plan.row, match.column, `matches the same card as row ${earlier}`);
      return { ...plan, valid: false };
    }
    this.matched.set(ids[0], plan.row);
    return { ...plan, action: 'update', cardId: ids[0] };
  }

  /**
   * A row whose key matches no card creates one; a later row of the same key
   * is refused as one matching a card an earlier row updates is, since the
   * next import would find the two cards and refuse both ("matches 2 cards").
   */
  private resolveCreate(plan: RowPlan): RowPlan {
    const match = this.ctx.match!;
    const key = this.matchKey(plan);
    if (!plan.title && this.keepsTitle) {
      // Not reported by `check`, which let it wait for matching.
      this.report(plan.row, this.ctx.mapping.titleColumn, 'the title is empty');
      return { ...plan, valid: false };
    }
    if (key?.kind === 'ref') {
      // A ref is given out by the project, never chosen: a card would be created with another.
      this.report(plan.row, match.column, `no card #${key.ref} in the project (a ref cannot be chosen; leave the cell empty to create a card)`);
      return { ...plan, valid: false };
    }
    // A row with a problem creates nothing (an empty title, say, is its own error).
    if (key === null || !plan.valid) return plan;
    const text = keyText(key);
    const earlier = this.creating.get(text);
    if (earlier !== undefined && earlier !== plan.row) {
      this.report(plan.row, this.ctx.match!.column, `matches the card row ${earlier} creates`);
      return { ...plan, valid: false };
    }
    this.creating.set(text, plan.row);
    return plan;
  }

  /**
   * The context columns of a plan whose group type allows one group per card
   * and already exists: only their groups can clash with a matched card's.
   */
  oneGroupColumns(plan: RowPlan): Array<{ column: number; typeId: number; title: string }> {
    return plan.groups.flatMap(({ column, titles }) => {
      const context = this.ctx.contexts.get(column)!;
      return context.oneGroupPerCard && context.groupTypeId !== null && titles.length
        ? [{ column, typeId: context.groupTypeId, title: titles[0] }]
        : [];
    });
  }

  /**
   * An update's groups against the groups its card is already in: a type
   * that allows one group per card cannot take it into a second group (the
   * card moves between them with relocate, DESIGN.md §6). Groups compare by
   * title, any case, as the import finds them.
   */
  checkHeldGroups(plan: RowPlan, held: HeldGroup[]): RowPlan {
    let clashes = 0;
    for (const { column, typeId, title } of this.oneGroupColumns(plan)) {
      const other = held.find((g) => g.typeId === typeId && foldCase(g.title) !== foldCase(title));
      if (!other) continue;
      clashes++;
      const name = this.ctx.contexts.get(column)!.name;
      this.report(plan.row, column, `the card is in "${other.title.slice(0, 40)}" of "${name}", which allows one group per card; move it with relocate`);
    }
    return clashes ? { ...plan, valid: false } : plan;
  }
}

/** A match key as a map key: values compare as their JSON with sorted object keys (jsonb equality). */
export function keyText(key: MatchKey): string {
  if (key.kind === 'title') return `t:${key.title}`;
  if (key.kind === 'ref') return `r:${key.ref}`;
  return `v:${stableJson(key.value)}`;
}

function stableJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableJson(v)}`).join(',')}}`;
}
