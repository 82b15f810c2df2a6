// Creating a directory and its missing parents, one level at a time. Node 20's
// `mkdirSync(dir, { recursive: true })` never returns on a path whose parent exists but refuses
// new entries with ENOENT (`/proc/x`: it retries the parent, finds it, and tries again, at 100%
// CPU): one level at a time, the refusal is an error like any other.
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';

function isDir(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Creates `dir` and its missing parents (as `mkdirSync(dir, { recursive: true })` does), and
 * throws mkdir's error (ENOENT, EACCES, ENOTDIR…) for the first level that cannot be created.
 * A directory that exists, or is created meanwhile by another process, is fine.
 *
 * @example
 * makeDirs('/proc/x'); // throws ENOENT: no such file or directory, mkdir '/proc/x'
 */
export function makeDirs(dir: string): void {
  if (isDir(dir)) return;
  const missing = [dir];
  for (let p = dirname(dir); !existsSync(p) && dirname(p) !== p; p = dirname(p)) missing.push(p);
  for (const d of missing.reverse()) {
    try {
      mkdirSync(d);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST' || !isDir(d)) throw e;
    }
  }
}
