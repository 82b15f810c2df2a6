import { statSync } from 'node:fs';
import { StepConflictError } from '../protocol/errors.js';

/**
 * How long a record log was when a writer last read or wrote it: its lines, and its bytes in
 * UTF-8 (each backend checks the one it can read without scanning the log).
 *
 * @example
 * const mark: RecordsMark = { lines: 12, bytes: 4096 };
 */
export interface RecordsMark {
  lines: number;
  bytes: number;
}

/**
 * The mark of a log text, or of `before` grown by `text`.
 *
 * @example
 * recordsMark('{"a":1}\n'); // { lines: 1, bytes: 8 }
 */
export function recordsMark(
  text: string,
  before: RecordsMark = { lines: 0, bytes: 0 },
): RecordsMark {
  let lines = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) lines++;
  return { lines: before.lines + lines, bytes: before.bytes + Buffer.byteLength(text, 'utf8') };
}

/** Size of a file in bytes (0 when it does not exist yet). */
export function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw e;
  }
}

/**
 * Refuses an append when the log moved on since the writer's mark: another writer (a second
 * process or instance on the same session) appended first, and this writer's view is stale.
 */
export function expectRecords(where: string, actual: number, expected: number, unit: string): void {
  if (actual === expected) return;
  throw new StepConflictError(
    `${where} changed since this writer read it (${actual} ${unit}, expected ${expected}): another process or instance wrote to the same session; reopen the session to continue from its log`,
    { path: where },
  );
}
