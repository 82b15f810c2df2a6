import { randomBytes } from 'node:crypto';
import { readdirSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';

const FILE_RE = /^index-(\d+)-[0-9a-f]{8}\.sqlite(-wal|-shm|\.build-\d+(?:-wal|-shm|-journal)?)?$/;

/**
 * The derived index files of a store directory. Each rebuild writes a new generation
 * `index-<n>-<tag>.sqlite` (a random tag) and removes the older ones: a name is never reused,
 * even after someone deleted every index file, so a process still holding an old generation
 * open (and SQLite's `-wal` / `-shm` files named after it, which SQLite removes by name when
 * the last connection closes) can never touch the new one.
 */
export interface IndexFiles {
  /** File name of the highest generation with a database file, or null. */
  current: string | null;
  /** Highest generation any file names (database, WAL, shared memory or unfinished build). */
  highest: number;
  /** Every index file name, with its generation. */
  names: { name: string; generation: number }[];
}

/** A new, never used file name for generation `n`. */
export function indexFileName(n: number): string {
  return `index-${n}-${randomBytes(4).toString('hex')}.sqlite`;
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
  let current: string | null = null;
  let currentGeneration = -1;
  let highest = 0;
  for (const name of all.sort()) {
    const m = FILE_RE.exec(name);
    if (!m) continue;
    const generation = Number(m[1]);
    names.push({ name, generation });
    if (generation > highest) highest = generation;
    if (m[2] === undefined && generation > currentGeneration) {
      current = name;
      currentGeneration = generation;
    }
  }
  return { current, highest, names };
}

/** Removes every index file but those of database `keep` (its WAL and shared memory). */
export function removeOldIndexFiles(dir: string, keep: string | null): void {
  for (const { name } of listIndexFiles(dir).names) {
    if (keep !== null && (name === keep || name === `${keep}-wal` || name === `${keep}-shm`)) {
      continue;
    }
    try {
      unlinkSync(join(dir, name));
    } catch {
      // Gone already, or not ours to remove: the next rebuild tries again.
    }
  }
}

/** Whether a process of this pid runs (one of another user counts: it may not be signalled). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/** The pid a leftover file names: a rebuild's `….build-<pid>` file, or a `.<name>.tmp-<pid>-<n>` file. */
function ownerPid(name: string): number | null {
  const m = FILE_RE.test(name) ? /\.build-(\d+)/.exec(name) : /^\..+\.tmp-(\d+)-\d+$/.exec(name);
  const pid = Number(m?.[1]);
  return Number.isSafeInteger(pid) && pid > 0 ? pid : null;
}

/**
 * The files of unfinished writes whose process is gone, in the store's top directory: a killed
 * `reindex`'s `….build-<pid>` database and its `-wal`, `-shm` and `-journal` (as large as the
 * index), and a killed compaction's `.recall_index.json.tmp-<pid>-<n>` or
 * `.eviction_log.json.tmp-<pid>-<n>` (as large as the snapshot). Never one of a live process
 * (nor of this one). Both are written holding the write lock, which is what makes removing them
 * under it safe.
 */
export function deadBuildFiles(dir: string): string[] {
  let all: string[] = [];
  try {
    all = readdirSync(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  return all.sort().filter((name) => {
    const pid = ownerPid(name);
    return pid !== null && pid !== process.pid && !alive(pid);
  });
}
