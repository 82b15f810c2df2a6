import { existsSync, readFileSync } from 'node:fs';
import { appendDurable, writeFileAtomic } from '../fs/durable-fs.js';
import { lastLine } from '../fs/last-line.js';
import { sha256Hex } from '../protocol/canonical-json.js';
import { IntegrityCheckError } from '../protocol/ipcf-errors.js';

/**
 * The head of a record log, kept outside it (a file beside it, a database row) and rewritten
 * with every append: how many lines the log had after that append, and the SHA-256 (hex) of the
 * last of them (its UTF-8 text without the newline). A log that no longer extends its head (fewer
 * lines, or another line at the head's position) was cut short or had its last line changed.
 *
 * @example
 * const head: RecordsHead = { lines: 12, last_sha256: 'e3b0c442…' };
 */
export interface RecordsHead {
  lines: number;
  last_sha256: string;
}

/** A record log's text, the head stored beside it (null: none) and where each is. */
export interface RecordsRead {
  path: string;
  text: string;
  head: RecordsHead | null;
  headPath: string;
}

/** The head file of the log at `path` (`events.jsonl` → `events.jsonl.head`). */
export function headFilePath(logPath: string): string {
  return `${logPath}.head`;
}

/** A log head as the file store writes it: with the log's size, so a writer knows it is current. */
interface FileHead extends RecordsHead {
  bytes: number;
}

/** The newline-terminated lines of `text`, without their newlines. */
function linesOf(text: string): string[] {
  const lines = text.split('\n');
  lines.pop();
  return lines;
}

/**
 * The head of a log of `before` lines after `text` (newline-terminated lines) is appended.
 *
 * @example
 * nextHead(3, '{"a":1}\n'); // { lines: 4, last_sha256: sha256Hex('{"a":1}') }
 */
export function nextHead(before: number, text: string): RecordsHead {
  const lines = linesOf(text);
  return { lines: before + lines.length, last_sha256: sha256Hex(lines.at(-1) ?? '') };
}

/** The SHA-256 of the empty string: the `last_sha256` of a head of no lines. */
const EMPTY_SHA256 = sha256Hex('');

/** Checks a stored head's fields; `where` names it in the error. */
function validHead(value: unknown, where: string): FileHead | RecordsHead {
  const h = value as Partial<FileHead> | null;
  if (
    h === null ||
    typeof h !== 'object' ||
    !Number.isSafeInteger(h.lines) ||
    h.lines! < 0 ||
    typeof h.last_sha256 !== 'string' ||
    !/^[0-9a-f]{64}$/.test(h.last_sha256) ||
    (h.lines === 0 && h.last_sha256 !== EMPTY_SHA256) ||
    (h.bytes !== undefined && !Number.isSafeInteger(h.bytes))
  ) {
    throw new IntegrityCheckError(
      `${where} is not a log head (lines and last_sha256): it was changed or torn; the log cannot be checked against it`,
      { path: where },
    );
  }
  return h as RecordsHead;
}

/**
 * A stored head's text (a head file, a database row) checked: JSON of the right fields, else an
 * `IntegrityCheckError` naming `where`.
 *
 * @example
 * parseHead('{"lines":12,"last_sha256":"e3b0…"}', 'postgres://…#events.head');
 */
export function parseHead(text: string, where: string): RecordsHead & { bytes?: number } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = null;
  }
  return validHead(parsed, where);
}

/**
 * The head file beside the log at `path` (null when there is none). A head that is not valid
 * JSON of the right fields is refused (`IntegrityCheckError` naming it).
 *
 * @example
 * readHeadFile('/repo/.contextfold/events.jsonl'); // { lines: 12, bytes: 4096, last_sha256: … }
 */
export function readHeadFile(logPath: string): (RecordsHead & { bytes?: number }) | null {
  const where = headFilePath(logPath);
  let text: string;
  try {
    text = readFileSync(where, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw notAFile(e, where);
  }
  return parseHead(text, where);
}

/**
 * A read error of a record log or its head: one that says the path is a directory when it is
 * (an `IntegrityCheckError` naming it, not an internal error), else the error itself.
 *
 * @example
 * try { readFileSync(path, 'utf8'); } catch (e) { throw notAFile(e, path); }
 */
export function notAFile(e: unknown, path: string): unknown {
  if ((e as NodeJS.ErrnoException).code !== 'EISDIR') return e;
  return new IntegrityCheckError(`${path} is a directory, not a file of the session log`, {
    path,
  });
}

/**
 * Writes a head file: temp file, fsync, rename; the directory is fsynced only when `created`.
 * A rename over an existing head that a power loss undoes leaves the older head, which the
 * (fsynced) log extends: accepted as a crash before the head write, so one fsync is saved.
 */
function writeHeadFile(path: string, head: FileHead, created: boolean): void {
  writeFileAtomic(headFilePath(path), `${JSON.stringify(head)}\n`, created);
}

/**
 * Appends `text` to the log file at `path` (`lines` lines and `bytes` bytes before it) and then
 * rewrites its head. The caller holds the log's lock. A crash between the two leaves the log
 * longer than its head, which readers accept. A log without a head (new, or from before the
 * head) first gets one for the lines it has, so such a crash never leaves a log that records
 * `log_head` without a head.
 */
export function appendWithHead(path: string, text: string, lines: number, bytes: number): void {
  if (!existsSync(headFilePath(path))) {
    const last = lines === 0 ? EMPTY_SHA256 : sha256Hex(lastLine(path) ?? '');
    writeHeadFile(path, { lines, last_sha256: last, bytes }, true);
  }
  appendDurable(path, text);
  const head = { ...nextHead(lines, text), bytes: bytes + Buffer.byteLength(text, 'utf8') };
  writeHeadFile(path, head, false);
}

/**
 * How many lines the log file at `path` has (it is `bytes` long): its head's count when the
 * head is current (written for this size), else counted in the file.
 */
export function fileLogLines(path: string, bytes: number): number {
  if (bytes === 0) return 0;
  const head = readHeadFile(path) as FileHead | null;
  if (head && head.bytes === bytes) return head.lines;
  return linesOf(readFileSync(path, 'utf8')).length;
}

/**
 * Checks that a log's lines extend its head: at least as many lines, and the line at the head's
 * position the one the head hashed. More lines than the head are a crash between an append and
 * its head write (accepted; the caller checks what they hold). Refusals name the log and line.
 *
 * @example
 * checkExtendsHead(lines, { lines: 3, last_sha256 }, 'events.jsonl', 'events.jsonl.head');
 */
export function checkExtendsHead(
  lines: readonly string[],
  head: RecordsHead,
  path: string,
  headPath: string,
): void {
  if (head.lines === 0) return;
  if (lines.length < head.lines) {
    const line = lines.length + 1;
    throw new IntegrityCheckError(
      `${path} line ${line} is missing: the log ends at line ${lines.length} but its head (${headPath}) records ${head.lines} lines (lines were cut off the end of the log after they were written)`,
      { path, line },
    );
  }
  if (sha256Hex(lines[head.lines - 1]!) !== head.last_sha256) {
    throw new IntegrityCheckError(
      `${path} line ${head.lines} does not match the log's head (${headPath}): the line was changed after it was written`,
      { path, line: head.lines },
    );
  }
}
