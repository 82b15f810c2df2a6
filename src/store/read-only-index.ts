// How a read-only store (an inspector) gets its private index without writing a byte into the
// store: the current index file itself when that is safe, else a copy of it in memory.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileIdentity } from './file-identity.js';
import { IndexDb, isRollbackFile } from './index-db.js';
import { listIndexFiles } from './index-files.js';

/** A current index file up to this size is copied into memory by a read-only store. */
const READ_ONLY_COPY_MAX = 512 * 1024 * 1024;

/**
 * The current index file opened read-only, when that creates nothing beside it: a file a
 * writer closed in rollback-journal mode, no `-wal`, `-shm` or `-journal` file next to it.
 * Open in no time whatever the store's size; a writer that opens it meanwhile switches it to
 * WAL, which this connection then reads through. Returns the file's name with it.
 */
export function readOnlyDirect(dir: string): { db: IndexDb; name: string } | null {
  const { current } = listIndexFiles(dir);
  if (current === null) return null;
  const path = join(dir, current);
  for (const side of ['-wal', '-shm', '-journal']) if (existsSync(`${path}${side}`)) return null;
  if (!isRollbackFile(path)) return null;
  try {
    const db = new IndexDb(path, { create: false, readonly: true });
    if (db.state().complete) return { db, name: current };
    db.close();
    return null;
  } catch {
    return null;
  }
}

/**
 * A private copy of the current index file, if there is a clean one (no WAL beside it); else
 * null, or why the current file is unusable (damaged, or an interrupted rebuild), for the
 * warning a writer would give when it rebuilds it.
 */
export function readOnlyCopy(dir: string): IndexDb | string | null {
  const { current } = listIndexFiles(dir);
  if (current === null) return null;
  const path = join(dir, current);
  if (existsSync(`${path}-wal`) || existsSync(`${path}-shm`)) return null;
  const id = fileIdentity(path);
  if (!id || id.size > READ_ONLY_COPY_MAX) return null;
  try {
    const db = new IndexDb(path, { create: false, bytes: readFileSync(path) });
    if (db.state().complete) return db;
    db.close();
    return `${path} is incomplete (an interrupted rebuild)`;
  } catch (e) {
    return (e as Error).message;
  }
}
