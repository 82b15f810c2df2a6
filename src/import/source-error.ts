import { UsageError } from '../protocol/errors.js';

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

/** True for a plain JSON object (not an array, not null). */
export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
