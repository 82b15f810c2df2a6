import { readdirSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';

const FILE_RE = /^index-(\d+)\.sqlite(-wal|-shm|\.build-\d+(?:-wal|-shm|-journal)?)?$/;

/**
 * The derived index files of a store directory. Each rebuild writes a new generation
 * `index-<n>.sqlite` and removes the older ones: a name is never reused, so a process still
 * holding an old generation open (and SQLite's `-wal` / `-shm` files named after it) can never
 * touch the new one.
 */
export interface IndexFiles {
  /** Highest generation with a database file, or null. */
  current: number | null;
  /** Highest generation any file names (database, WAL, shared memory or unfinished build). */
  highest: number;
  /** Every index file name, with its generation. */
  names: { name: string; generation: number }[];
}

/** File name of generation `n`. */
export function indexFileName(n: number): string {
  return `index-${n}.sqlite`;
}

/** Lists the derived index files of a store directory (an absent directory has none). */
export function listIndexFiles(dir: string): IndexFiles {
  let all: string[] = [];
  try {
    all = readdirSync(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  const names: { name: string; generation: number }[] = [];
  let current: number | null = null;
  let highest = 0;
  for (const name of all) {
    const m = FILE_RE.exec(name);
    if (!m) continue;
    const generation = Number(m[1]);
    names.push({ name, generation });
    if (generation > highest) highest = generation;
    if (m[2] === undefined && (current === null || generation > current)) current = generation;
  }
  return { current, highest, names };
}

/** Removes every index file of a generation below `keep` and every unfinished build. */
export function removeOldIndexFiles(dir: string, keep: number): void {
  for (const { name, generation } of listIndexFiles(dir).names) {
    if (generation >= keep && !name.includes('.build-')) continue;
    try {
      unlinkSync(join(dir, name));
    } catch {
      // Gone already, or not ours to remove: the next rebuild tries again.
    }
  }
}
