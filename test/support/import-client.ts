import { sheetFile, type Cell, type SheetFormat } from './spreadsheets.js';
import { as, createTestApp, type TestApp, type TestAppOptions, type TestUser } from './test-app.js';
import { API, workspaceClient, type ProjectJson } from './workspace-client.js';

export const DISCOVER = `${API}/importers/spreadsheet/discover`;
export const IMPORT = `${API}/importers/spreadsheet/import`;
/** `${UPLOADS}/<file_id>`: DELETE removes an upload before its 24 hours are over. */
export const UPLOADS = `${API}/importers/spreadsheet/files`;

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
  const upload = async (file: Buffer, name: string): Promise<number> =>
    (await t.http.post(DISCOVER).set(as(user)).attach('file', file, name).expect(201)).body.file_id;
  return {
    /** Uploads `rows` as a CSV file (or of `format`); its `file_id`. */
    discover: (rows: Cell[][], format: SheetFormat = 'csv'): Promise<number> => upload(sheetFile(rows, format), `sheet.${format}`),
    /** Uploads CSV text as it is written; its `file_id`. */
    discoverCsv: (csv: string): Promise<number> => upload(Buffer.from(csv), 'sheet.csv'),
    importing: (body: Record<string, unknown>) => t.http.post(IMPORT).set(as(user)).send(body),
    /** Deletes an upload (any path segment: the tests send bad ids too). */
    deleteUpload: (fileId: number | string) => t.http.delete(`${UPLOADS}/${fileId}`).set(as(user)),
    /** The project's cards directly under its top-level card (the rows' cards), by ref. */
    async rowCards(project: ProjectJson): Promise<ImportedCardJson[]> {
      const all = (await t.http.get(`${API}/projects/${project.id}/cards?per_page=1000`).set(as(user)).expect(200)).body as ImportedCardJson[];
      return all.filter((c) => c.parent_id === project.top_level_card_id).sort((a, b) => a.ref - b.ref);
    },
  };
}

export type ImportClient = ReturnType<typeof importClient>;

/** What the importer's suites start from; each closes `t` after all its tests. */
export interface ImportWorld {
  t: TestApp;
  /** The user who imports, admin of `team`. */
  alice: TestUser;
  ws: ReturnType<typeof workspaceClient>;
  team: number;
  /** alice's importer client. */
  imports: ImportClient;
}

/** The whole app on a fresh database (`options` as createTestApp's), a user with a team of her own, and her importer client. */
export async function importWorld(options: TestAppOptions = {}): Promise<ImportWorld> {
  const t = await createTestApp(options);
  const alice = await t.user();
  const ws = workspaceClient(t);
  return { t, alice, ws, team: await ws.team(alice), imports: importClient(t, alice) };
}
