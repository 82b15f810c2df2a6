import { createHash } from 'node:crypto';
import { closeSync, openSync, readSync } from 'node:fs';

/** One member of `recall_index.json`: a top-level field, or one entry of `nodes`. */
export type SnapshotMember =
  | { kind: 'field'; key: string; value: unknown }
  | { kind: 'node'; key: string; value: unknown };

/** Outcome of reading a snapshot: its SHA-256, or why its bytes are not one JSON object. */
export type SnapshotRead = { ok: true; sha256: string } | { ok: false; reason: string };

const WS = new Set([0x20, 0x09, 0x0a, 0x0d]);
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN_OBJ = 0x7b;
const CLOSE_OBJ = 0x7d;
const OPEN_ARR = 0x5b;
const CLOSE_ARR = 0x5d;

type Where =
  | 'start'
  | 'key-or-close'
  | 'key'
  | 'in-key'
  | 'colon'
  | 'value'
  | 'in-value'
  | 'after-value'
  | 'done';

/** The states between tokens, where white space is skipped. */
const BETWEEN_TOKENS = new Set<Where>([
  'start',
  'key-or-close',
  'key',
  'colon',
  'value',
  'after-value',
  'done',
]);

/**
 * An incremental parser of the recall index's two outer levels: the top-level object and its
 * `nodes` object. Every other value (a field, one node entry) is cut out as raw bytes and handed
 * to `JSON.parse`, so memory stays bounded by one entry however large the index is, and the
 * whole file is still checked to be exactly one JSON object (any formatting).
 */
class OuterLevels {
  #where: Where = 'start';
  /** 1: the top-level object; 2: inside `nodes`. */
  #level = 1;
  #key: Buffer[] = [];
  #keyText = '';
  #value: Buffer[] = [];
  #valueStart = -1;
  #nest = 0;
  #inString = false;
  #escape = false;
  #scalar = false;
  readonly #seenFields = new Set<string>();
  readonly #seenNodes = new Set<string>();
  readonly #emit: (m: SnapshotMember) => void;

  constructor(emit: (m: SnapshotMember) => void) {
    this.#emit = emit;
  }

  get done(): boolean {
    return this.#where === 'done';
  }

  /** Feeds bytes; throws a string reason on malformed input. */
  push(buf: Buffer): void {
    let i = 0;
    const n = buf.length;
    while (i < n) {
      const c = buf[i]!;
      if (WS.has(c) && BETWEEN_TOKENS.has(this.#where)) {
        i++;
        continue;
      }
      switch (this.#where) {
        case 'start':
          if (c !== OPEN_OBJ) throw 'does not start with an object';
          this.#where = 'key-or-close';
          break;
        case 'key-or-close':
        case 'key':
          if (c === CLOSE_OBJ && this.#where === 'key-or-close') {
            this.#close();
            break;
          }
          if (c !== QUOTE) throw 'expected a key';
          this.#where = 'in-key';
          this.#key = [];
          this.#valueStart = i;
          this.#escape = false;
          // Read on from here: a key whose quote ends the chunk is captured from it now, before
          // the buffer is reused (its start is an offset into this chunk only).
          i = this.#readKey(buf, i + 1);
          continue;
        case 'in-key':
          i = this.#readKey(buf, i);
          continue;
        case 'colon':
          if (c !== COLON) throw 'expected a colon';
          this.#where = 'value';
          break;
        case 'value':
          if (this.#level === 1 && this.#keyText === 'nodes' && c === OPEN_OBJ) {
            this.#note(this.#seenFields, 'field');
            // Its members follow one by one; the field itself is known to be an object.
            this.#emit({ kind: 'field', key: 'nodes', value: {} });
            this.#level = 2;
            this.#where = 'key-or-close';
            break;
          }
          this.#value = [];
          this.#valueStart = i;
          this.#nest = 0;
          this.#inString = false;
          this.#escape = false;
          this.#scalar = c !== OPEN_OBJ && c !== OPEN_ARR && c !== QUOTE;
          this.#where = 'in-value';
          continue; // re-read this byte in 'in-value'
        case 'in-value':
          i = this.#readValue(buf, i);
          continue;
        case 'after-value':
          if (c === COMMA) this.#where = 'key';
          else if (c === CLOSE_OBJ) this.#close();
          else throw 'expected a comma or a closing brace';
          break;
        case 'done':
          throw 'data after the end of the object';
      }
      i++;
    }
  }

  /**
   * Reads on in the key being read, from `i`: where to go on in `buf` (its length when the key
   * continues in the next chunk).
   */
  #readKey(buf: Buffer, i: number): number {
    const end = this.#stringEnd(buf, i);
    if (!this.#capture(this.#key, buf, end < 0 ? -1 : end + 1)) return buf.length;
    const text = Buffer.concat(this.#key).toString('utf8');
    try {
      this.#keyText = JSON.parse(text) as string;
    } catch {
      throw `a key is not a valid JSON string: ${JSON.stringify(text.slice(0, 80))}`;
    }
    this.#where = 'colon';
    return end + 1;
  }

  /**
   * Reads on in the value being captured, from `i`: where to go on in `buf` (its length when the
   * value continues in the next chunk).
   */
  #readValue(buf: Buffer, i: number): number {
    const end = this.#valueEnd(buf, i);
    if (!this.#capture(this.#value, buf, end)) return buf.length;
    this.#finishValue();
    this.#where = 'after-value';
    return end;
  }

  /**
   * Adds the bytes of the key or value being read, from where it started in this chunk up to
   * `end`, to `parts`. When it runs past the chunk (`end` -1) the rest is copied (the caller
   * reuses its buffer for the next chunk) and false says to read on in the next one.
   */
  #capture(parts: Buffer[], buf: Buffer, end: number): boolean {
    if (end >= 0) {
      parts.push(buf.subarray(this.#valueStart, end));
      return true;
    }
    parts.push(Buffer.from(buf.subarray(this.#valueStart)));
    this.#valueStart = 0;
    return false;
  }

  /** Index of the closing quote of the key being read (it opened before `from`), or -1. */
  #stringEnd(buf: Buffer, from: number): number {
    for (let i = from; i < buf.length; i++) {
      const c = buf[i]!;
      if (this.#escape) this.#escape = false;
      else if (c === BACKSLASH) this.#escape = true;
      else if (c === QUOTE) return i;
    }
    return -1;
  }

  /** One past the last byte of the value being captured, or -1 if it continues. */
  #valueEnd(buf: Buffer, from: number): number {
    for (let i = from; i < buf.length; i++) {
      const c = buf[i]!;
      if (this.#scalar) {
        if (WS.has(c) || c === COMMA || c === CLOSE_OBJ || c === CLOSE_ARR) return i;
        continue;
      }
      if (this.#inString) {
        if (this.#escape) this.#escape = false;
        else if (c === BACKSLASH) this.#escape = true;
        else if (c === QUOTE) {
          this.#inString = false;
          if (this.#nest === 0) return i + 1;
        }
        continue;
      }
      if (c === QUOTE) this.#inString = true;
      else if (c === OPEN_OBJ || c === OPEN_ARR) this.#nest++;
      else if (c === CLOSE_OBJ || c === CLOSE_ARR) {
        this.#nest--;
        if (this.#nest === 0) return i + 1;
        if (this.#nest < 0) throw 'unbalanced brackets';
      }
    }
    return -1;
  }

  #note(seen: Set<string>, what: string): void {
    if (seen.has(this.#keyText)) throw `${what} ${JSON.stringify(this.#keyText)} appears twice`;
    seen.add(this.#keyText);
  }

  #finishValue(): void {
    const text = Buffer.concat(this.#value).toString('utf8');
    this.#value = [];
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw `the value of ${JSON.stringify(this.#keyText)} is not valid JSON`;
    }
    const kind = this.#level === 2 ? 'node' : 'field';
    this.#note(kind === 'node' ? this.#seenNodes : this.#seenFields, kind);
    this.#emit({ kind, key: this.#keyText, value });
  }

  #close(): void {
    if (this.#level === 2) {
      this.#level = 1;
      this.#where = 'after-value';
    } else {
      this.#where = 'done';
    }
  }
}

/** Bytes read per turn of the event loop (a few hundred entries: tens of milliseconds). */
export const SNAPSHOT_CHUNK = 1 << 18;

/**
 * Reads `recall_index.json` incrementally: `onMembers` receives its members chunk by chunk (top
 * fields and node entries, in file order, values parsed), and the event loop gets a turn between
 * chunks. Resolves to the file's SHA-256, or to why it is not exactly one JSON object (truncated,
 * corrupted, a key twice). Memory stays bounded by one chunk (`chunkBytes`, default
 * {@link SNAPSHOT_CHUNK}) and one entry.
 *
 * @example
 * const r = await readSnapshot(path, async (members) => { for (const m of members) … });
 * if (!r.ok) console.error(r.reason);
 */
export async function readSnapshot(
  path: string,
  onMembers: (members: SnapshotMember[]) => void | Promise<void>,
  options: { chunkBytes?: number } = {},
): Promise<SnapshotRead> {
  const chunkBytes = options.chunkBytes ?? SNAPSHOT_CHUNK;
  const hash = createHash('sha256');
  let batch: SnapshotMember[] = [];
  const parser = new OuterLevels((m) => batch.push(m));
  const fd = openSync(path, 'r');
  const buf = Buffer.allocUnsafe(chunkBytes);
  try {
    for (;;) {
      const got = readSync(fd, buf, 0, chunkBytes, null);
      if (got === 0) break;
      const chunk = buf.subarray(0, got);
      hash.update(chunk);
      try {
        parser.push(chunk);
      } catch (e) {
        if (typeof e === 'string') return { ok: false, reason: e };
        throw e;
      }
      if (batch.length > 0) {
        const members = batch;
        batch = [];
        await onMembers(members);
      }
      await new Promise<void>((r) => setImmediate(r));
    }
  } finally {
    closeSync(fd);
  }
  if (!parser.done) return { ok: false, reason: 'it ends before the object is complete' };
  return { ok: true, sha256: hash.digest('hex') };
}
