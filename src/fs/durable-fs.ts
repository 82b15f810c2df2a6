import { execFileSync } from 'node:child_process';
import { closeSync, fsyncSync, openSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

let tmpCounter = 0;

/** fsyncs a directory so a rename or create inside it survives a power loss. */
export function fsyncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Writes all of `data` to an open file descriptor. */
function writeAll(fd: number, data: Uint8Array): void {
  let off = 0;
  while (off < data.length) off += writeSync(fd, data, off, data.length - off);
}

/**
 * Writes a file atomically: temp file in the same directory, fsync, rename over the target.
 * With `syncDir` (default) the directory is fsynced too. A crash leaves either the old file
 * or the new one, never a mix (plus possibly a stray temp file, which validate reports).
 */
export function writeFileAtomic(path: string, data: string | Uint8Array, syncDir = true): void {
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  const tmp = join(dirname(path), `.${basename(path)}.tmp-${process.pid}-${tmpCounter++}`);
  const fd = openSync(tmp, 'wx', 0o644);
  try {
    writeAll(fd, bytes);
    fsyncSync(fd);
  } catch (e) {
    closeSync(fd);
    try {
      unlinkSync(tmp);
    } catch {}
    throw e;
  }
  closeSync(fd);
  renameSync(tmp, path);
  if (syncDir) fsyncDir(dirname(path));
}

/**
 * Writes many files for one batch: each goes to a temp file and is renamed into place, then all
 * are fsynced together and their directories once. Far cheaper than one fsync per write for
 * large batches; until it returns nothing that refers to the files may be written (a crash
 * leaves files nothing indexes, which validate reports as orphans).
 */
export function writeFilesDurable(files: { path: string; data: string | Uint8Array }[]): void {
  const dirs = new Set<string>();
  for (const f of files) {
    const bytes = typeof f.data === 'string' ? Buffer.from(f.data, 'utf8') : f.data;
    const tmp = join(dirname(f.path), `.${basename(f.path)}.tmp-${process.pid}-${tmpCounter++}`);
    const fd = openSync(tmp, 'wx', 0o644);
    try {
      writeAll(fd, bytes);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, f.path);
    dirs.add(dirname(f.path));
  }
  if (!(files.length >= 32 && syncFileSystem(files[0]!.path))) {
    for (const f of files) {
      const fd = openSync(f.path, 'r');
      try {
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
    }
  }
  for (const d of dirs) fsyncDir(d);
}

let syncfsWorks = process.platform === 'linux';

/**
 * syncfs(2) on the file system holding `path`, through coreutils `sync -f` (Node has no
 * binding): one flush for a whole batch instead of one fsync per file (measured: 25 ms vs
 * 620 ms for 500 files on ext4). Returns false where it is unavailable.
 */
function syncFileSystem(path: string): boolean {
  if (!syncfsWorks) return false;
  try {
    execFileSync('sync', ['-f', path], { stdio: 'ignore' });
    return true;
  } catch {
    syncfsWorks = false;
    return false;
  }
}

/** Appends bytes to a file and fsyncs it. Returns whether the file was created by this call. */
export function appendDurable(path: string, data: string): void {
  const fd = openSync(path, 'a', 0o644);
  try {
    writeAll(fd, Buffer.from(data, 'utf8'));
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** True if a path is a temp file left by {@link writeFileAtomic}. */
export function isTempFileName(name: string): boolean {
  return /^\..+\.tmp-\d+-\d+$/.test(name);
}
