// The two bytes of an index file's SQLite header that say WAL or rollback-journal mode: a
// read-only process opens the file itself only when it is in rollback mode (then the open
// creates nothing beside it), and an in-memory copy of a WAL file is readable only as a
// rollback image. Read before SQLite opens the file, so apart from the connection.
import { closeSync, openSync, readSync } from 'node:fs';

/** SQLite header offsets of the file format bytes: 2 and 2 in WAL mode, 1 and 1 in rollback. */
const FORMAT_WRITE = 18;
const FORMAT_READ = 19;

/**
 * The image of a WAL-mode database file as a rollback-journal one, for opening in memory: a
 * deserialised WAL database cannot be read at all (SQLite needs its -shm file), so the file
 * format bytes are set to 1 = legacy. Nothing else differs.
 */
export function asRollbackImage(bytes: Buffer): Buffer {
  if (bytes.length >= 100 && bytes[FORMAT_WRITE] === 2 && bytes[FORMAT_READ] === 2) {
    bytes[FORMAT_WRITE] = 1;
    bytes[FORMAT_READ] = 1;
  }
  return bytes;
}

/** True when an index file's header says rollback-journal mode (a read-only open creates nothing). */
export function isRollbackFile(path: string): boolean {
  try {
    const fd = openSync(path, 'r');
    try {
      const head = Buffer.alloc(FORMAT_READ + 1);
      const n = readSync(fd, head, 0, head.length, 0);
      return n === head.length && head[FORMAT_WRITE] === 1 && head[FORMAT_READ] === 1;
    } finally {
      closeSync(fd);
    }
  } catch {
    return false;
  }
}
