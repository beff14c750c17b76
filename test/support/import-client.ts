import { sheetFile, type Cell } from './spreadsheets.js';
import { as, type TestApp, type TestUser } from './test-app.js';
import { API, type ProjectJson } from './workspace-client.js';

export const DISCOVER = `${API}/importers/spreadsheet/discover`;
export const IMPORT = `${API}/importers/spreadsheet/import`;

/** A card as the importer's tests read it back. */
export interface ImportedCardJson {
  id: number;
  ref: number;
  title: string;
  parent_id: number;
  attributes: Record<string, unknown>;
}

/** The spreadsheet importer's two steps as one user calls them, and the cards an import made. */
export function importClient(t: TestApp, user: TestUser) {
  return {
    /** Uploads `rows` as a CSV file; its `file_id`. */
    async discover(rows: Cell[][]): Promise<number> {
      return (await t.http.post(DISCOVER).set(as(user)).attach('file', sheetFile(rows, 'csv'), 'sheet.csv').expect(201)).body.file_id;
    },
    importing: (body: Record<string, unknown>) => t.http.post(IMPORT).set(as(user)).send(body),
    /** The project's cards directly under its top-level card (the rows' cards), by ref. */
    async rowCards(project: ProjectJson): Promise<ImportedCardJson[]> {
      const all = (await t.http.get(`${API}/projects/${project.id}/cards?per_page=1000`).set(as(user)).expect(200)).body as ImportedCardJson[];
      return all.filter((c) => c.parent_id === project.top_level_card_id).sort((a, b) => a.ref - b.ref);
    },
  };
}
