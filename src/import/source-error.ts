import { UsageError } from '../protocol/errors.js';
import { describeJsonError } from './json-syntax.js';

/**
 * The one-line error for bad import input: where (file and line) and what is wrong.
 *
 * @example
 * throw sourceError('chat.json', 12, 'message 3 has no "role"; every message needs one');
 */
export function sourceError(source: string, line: number | null, problem: string): UsageError {
  const where = line === null ? source : `${source}:${line}`;
  return new UsageError(`${where}: ${problem}`, {
    path: source,
    ...(line === null ? {} : { line }),
  });
}

/**
 * Parses one line of a JSON-lines input, or throws the {@link sourceError} naming the line, the
 * syntax error, and what a line of the format holds (`holds`, e.g. "one JSON object per line").
 *
 * @example
 * parseJsonLine('{"a":1}', 'turns.jsonl', 3, 'one object per line'); // { a: 1 }
 */
export function parseJsonLine(raw: string, source: string, line: number, holds: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    throw sourceError(source, line, `not valid JSON (${describeJsonError(raw)}); ${holds}`);
  }
}

/** True for a plain JSON object (not an array, not null). */
export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
