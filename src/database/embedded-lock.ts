import fs from 'node:fs';
import path from 'node:path';

const LOCK_FILE = 'server.pid';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Pid of a live process holding the embedded database in dataDir, if any. */
export function embeddedHolder(dataDir: string): number | undefined {
  try {
    const pid = Number(fs.readFileSync(path.join(dataDir, LOCK_FILE), 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 && pid !== process.pid && alive(pid) ? pid : undefined;
  } catch {
    return undefined;
  }
}

export class EmbeddedDatabaseBusyError extends Error {
  constructor(dataDir: string, pid: number) {
    super(
      `The embedded database in ${dataDir} is in use by a running cardwork server (pid ${pid}). ` +
        'Stop that server first, or set DATABASE_URL to use a PostgreSQL server.',
    );
  }
}

/**
 * PGlite has no lock of its own and two processes on one data directory would
 * corrupt it, so the server claims the directory with a pid file.
 */
export function claimEmbedded(dataDir: string): () => void {
  fs.mkdirSync(dataDir, { recursive: true });
  const holder = embeddedHolder(dataDir);
  if (holder) throw new EmbeddedDatabaseBusyError(dataDir, holder);
  const file = path.join(dataDir, LOCK_FILE);
  fs.writeFileSync(file, String(process.pid));
  return () => {
    try {
      if (fs.readFileSync(file, 'utf8').trim() === String(process.pid)) fs.unlinkSync(file);
    } catch {
      /* already gone */
    }
  };
}

export function assertEmbeddedFree(dataDir: string): void {
  const holder = embeddedHolder(dataDir);
  if (holder) throw new EmbeddedDatabaseBusyError(dataDir, holder);
}
