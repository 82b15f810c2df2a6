import {
  closeSync,
  fsyncSync,
  openSync,
  renameSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
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
