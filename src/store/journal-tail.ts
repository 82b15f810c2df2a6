import {
  closeSync,
  existsSync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readSync,
  unlinkSync,
} from 'node:fs';
import { join } from 'node:path';
import { fsyncDir, writeFileAtomic } from '../fs/durable-fs.js';
import type { StoreLayout } from './layout.js';

const CHUNK = 64 * 1024;

/** A journal whose last line has no newline: where its complete lines end, and its size. */
export interface TornTail {
  cut: number;
  size: number;
}

/**
 * Finds a torn last line of the journal (bytes after its last newline), reading backwards from
 * the end in chunks; a whole journal costs a one-byte read (this runs on every write).
 */
export function findTornTail(path: string): TornTail | null {
  if (!existsSync(path)) return null;
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    if (size === 0) return null;
    // The common case, every write: a whole journal, told by its last byte alone.
    const last = Buffer.alloc(1);
    readAt(fd, last, 1, size - 1);
    if (last[0] === 0x0a) return null;
    const buf = Buffer.alloc(Math.min(CHUNK, size));
    let end = size;
    while (end > 0) {
      const len = Math.min(CHUNK, end);
      readAt(fd, buf, len, end - len);
      const nl = buf.subarray(0, len).lastIndexOf(0x0a);
      if (nl !== -1) return { cut: end - len + nl + 1, size };
      end -= len;
    }
    return { cut: 0, size };
  } finally {
    closeSync(fd);
  }
}

function readAt(fd: number, buf: Buffer, len: number, pos: number): void {
  let off = 0;
  while (off < len) {
    const n = readSync(fd, buf, off, len - off, pos + off);
    if (n === 0) throw new Error(`journal shrank while it was read (at byte ${pos + off})`);
    off += n;
  }
}

/**
 * Moves a torn journal tail into `<store>/quarantine/` (bytes intact, synced) and cuts the
 * journal back to its last complete line; a journal with no complete line is removed. Call
 * holding the write lock: then no writer is mid-append, so the tail is the remains of one
 * whose append never returned, and so of a fold that never reported done. Returns the
 * quarantine file's path.
 */
export function quarantineTornTail(layout: StoreLayout, tail: TornTail): string {
  const path = layout.journalPath;
  const bytes = Buffer.alloc(tail.size - tail.cut);
  const dir = join(layout.dir, 'quarantine');
  const name = `recall_index.journal.torn-at-${tail.cut}`;
  let to = join(dir, name);
  for (let n = 1; existsSync(to); n++) to = join(dir, `${name}.${n}`);
  const fd = openSync(path, 'r+');
  try {
    readAt(fd, bytes, bytes.length, tail.cut);
    if (mkdirSync(dir, { recursive: true }) !== undefined) fsyncDir(layout.dir);
    writeFileAtomic(to, bytes);
    if (tail.cut > 0) {
      ftruncateSync(fd, tail.cut);
      fsyncSync(fd);
    }
  } finally {
    closeSync(fd);
  }
  if (tail.cut === 0) {
    unlinkSync(path);
    fsyncDir(layout.dir);
  }
  return to;
}
