import {
  closeSync,
  fstatSync,
  fsync,
  fsyncSync,
  ftruncateSync,
  openSync,
  renameSync,
  unlinkSync,
  write,
  writeSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';

let tmpCounter = 0;

/** Temp files this process opened and has not yet committed or discarded. */
const liveTemps = new Set<string>();

/**
 * Removes the temp files of this process's writes in progress (synchronously, best effort): a
 * stop signal's handler calls it before the process ends, so an interrupted write leaves the
 * store as it was rather than `.<name>.tmp-<pid>-<n>` files that validate reports. Only this
 * process's own temp files are known here, so another process's write is never touched. Returns
 * the paths removed.
 */
export function removeLiveTemps(): string[] {
  const removed: string[] = [];
  for (const tmp of liveTemps) {
    try {
      unlinkSync(tmp);
      removed.push(tmp);
    } catch {}
  }
  liveTemps.clear();
  return removed;
}

/** fsyncs a directory so a rename or create inside it survives a power loss. */
export function fsyncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Opens a new temp file beside `path` (`.<name>.tmp-<pid>-<n>`, which validate recognises):
 * write it, then {@link commitTemp} or {@link discardTemp}.
 */
export function openTemp(path: string): { tmp: string; fd: number } {
  const tmp = join(dirname(path), `.${basename(path)}.tmp-${process.pid}-${tmpCounter++}`);
  const fd = openSync(tmp, 'wx', 0o644);
  liveTemps.add(tmp);
  return { tmp, fd };
}

/** After a failed write: closes the temp file and removes it (best effort). */
export function discardTemp(temp: { tmp: string; fd: number }): void {
  liveTemps.delete(temp.tmp);
  closeSync(temp.fd);
  try {
    unlinkSync(temp.tmp);
  } catch {}
}

/** After a complete, fsynced write: closes the temp file and renames it over `path`. */
export function commitTemp(temp: { tmp: string; fd: number }, path: string): void {
  closeSync(temp.fd);
  renameSync(temp.tmp, path);
  liveTemps.delete(temp.tmp);
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
  const temp = openTemp(path);
  try {
    writeAll(temp.fd, bytes);
    fsyncSync(temp.fd);
  } catch (e) {
    discardTemp(temp);
    throw e;
  }
  commitTemp(temp, path);
  if (syncDir) fsyncDir(dirname(path));
}

/**
 * Writes all of `data` off the event loop (the thread pool): a write that the kernel throttles
 * (dirty pages on a busy disk) then delays nothing else.
 */
export async function writeAllAsync(fd: number, data: Uint8Array): Promise<void> {
  let off = 0;
  while (off < data.length) {
    off += await new Promise<number>((resolve, reject) =>
      write(fd, data, off, data.length - off, null, (e, n) => (e ? reject(e) : resolve(n))),
    );
  }
}

/** fsync off the event loop. */
export const fsyncAsync = (fd: number): Promise<void> =>
  new Promise<void>((resolve, reject) => fsync(fd, (e) => (e ? reject(e) : resolve())));

/**
 * Writes many new files for one batch: each goes to a temp file, all temp files are fsynced
 * concurrently (the file system commits them together; no machine-wide sync), then each is
 * renamed into place and every directory fsynced once. A crash leaves complete files or temp
 * files, never a partial file under its final name; until it resolves nothing that refers to
 * the files may be written (validate reports files nothing indexes as orphans).
 */
export async function writeFilesDurable(
  files: { path: string; data: string | Uint8Array }[],
): Promise<void> {
  const written: { tmp: string; path: string; fd: number }[] = [];
  try {
    for (const f of files) {
      const bytes = typeof f.data === 'string' ? Buffer.from(f.data, 'utf8') : f.data;
      const temp = openTemp(f.path);
      written.push({ ...temp, path: f.path });
      writeAll(temp.fd, bytes);
    }
    await Promise.all(written.map((w) => fsyncAsync(w.fd)));
  } catch (e) {
    for (const w of written) {
      liveTemps.delete(w.tmp);
      try {
        closeSync(w.fd);
        unlinkSync(w.tmp);
      } catch {}
    }
    throw e;
  }
  const dirs = new Set<string>();
  for (const w of written) {
    closeSync(w.fd);
    renameSync(w.tmp, w.path);
    liveTemps.delete(w.tmp);
    dirs.add(dirname(w.path));
  }
  for (const d of dirs) fsyncDir(d);
}

/**
 * Appends bytes to a file and fsyncs it, whole or not at all: when a write or the fsync fails
 * (a full disk cuts a write short), the file is cut back to its size before the call, so no
 * prefix of the bytes (some complete journal lines of a batch) stays behind.
 */
export function appendDurable(path: string, data: string): void {
  const fd = openSync(path, 'a', 0o644);
  try {
    const size = fstatSync(fd).size;
    try {
      writeAll(fd, Buffer.from(data, 'utf8'));
      fsyncSync(fd);
    } catch (e) {
      try {
        ftruncateSync(fd, size);
        fsyncSync(fd);
      } catch {}
      throw e;
    }
  } finally {
    closeSync(fd);
  }
}

/** True if a path is a temp file left by {@link writeFileAtomic}. */
export function isTempFileName(name: string): boolean {
  return /^\..+\.tmp-\d+-\d+$/.test(name);
}
