import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { inflateRawSync } from 'node:zlib';
import Database from 'better-sqlite3';

/** One file written under a directory, as a leak check must see it. */
export interface WrittenFile {
  path: string;
  bytes: Buffer;
}

/** A BLOB as text: inflated when it is a raw-deflate stream (the index deflates its bodies). */
function blobText(b: Buffer): Buffer {
  try {
    return inflateRawSync(b);
  } catch {
    return b;
  }
}

/**
 * Every row of every table of a SQLite file (WAL included), BLOBs inflated: the derived index
 * keeps entries and analyses deflated, so its raw bytes would hide a leaked secret.
 */
export function sqliteRowBytes(path: string): Buffer {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    const parts: Buffer[] = [];
    const tables = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
      .pluck()
      .all() as string[];
    for (const t of tables) {
      for (const row of db.prepare(`SELECT * FROM "${t}"`).raw().iterate() as Iterable<unknown[]>) {
        for (const v of row) {
          parts.push(Buffer.isBuffer(v) ? blobText(v) : Buffer.from(`${v}\n`, 'utf8'));
        }
      }
    }
    return Buffer.concat(parts);
  } finally {
    db.close();
  }
}

/**
 * Every file under `dir` as bytes a leak check can search: plain files as they are, and each
 * `*.sqlite` file twice, as raw bytes and as its decoded rows.
 */
export function writtenFiles(dir: string): WrittenFile[] {
  const out: WrittenFile[] = [];
  for (const e of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!e.isFile()) continue;
    const path = join(e.parentPath, e.name);
    out.push({ path, bytes: readFileSync(path) });
    if (e.name.endsWith('.sqlite'))
      out.push({ path: `${path} (rows)`, bytes: sqliteRowBytes(path) });
  }
  return out;
}

/** {@link writtenFiles} concatenated. */
export function everyWrittenByte(dir: string): Buffer {
  return Buffer.concat(writtenFiles(dir).map((f) => f.bytes));
}
