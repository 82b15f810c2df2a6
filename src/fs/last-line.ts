import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

/** Bytes read per step from the end of the file. */
const CHUNK = 64 * 1024;

/**
 * The last line of a file of `\n`-terminated lines (without its `\n`), read from the end: only
 * that line's bytes are read, however long the file. `null` when the file is missing or empty.
 *
 * @example
 * lastLine('/repo/.contextfold/events.jsonl'); // '{"type":"turn_completed",…}'
 */
export function lastLine(path: string): string | null {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
  try {
    const size = fstatSync(fd).size;
    if (size === 0) return null;
    // The file's last byte ends the last line; look for the `\n` before it.
    const end = size - 1;
    const chunks: Buffer[] = [];
    let pos = end;
    while (pos > 0) {
      const n = Math.min(CHUNK, pos);
      const buf = Buffer.alloc(n);
      readSync(fd, buf, 0, n, pos - n);
      const nl = buf.lastIndexOf(0x0a);
      if (nl !== -1) {
        chunks.unshift(buf.subarray(nl + 1));
        break;
      }
      chunks.unshift(buf);
      pos -= n;
    }
    return Buffer.concat(chunks).toString('utf8');
  } finally {
    closeSync(fd);
  }
}
