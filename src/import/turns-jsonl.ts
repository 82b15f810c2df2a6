import { describeJsonError } from './json-syntax.js';
import { isRecord, sourceError } from './source-error.js';
import type { ImportedTurn, TurnRole } from './turn.js';

const ROLES: readonly string[] = ['system', 'user', 'assistant', 'tool'];

/**
 * Parses the turns JSONL of `../shared/data/trajectories`: one `{ step_id, role, content }` a
 * line. Step ids must be non-negative integers in increasing order (positions in the history);
 * blank lines are ignored.
 *
 * @example
 * parseTurnsJsonl('{"step_id":0,"role":"user","content":"hi"}\n', 'run.jsonl');
 */
export function parseTurnsJsonl(text: string, source: string): ImportedTurn[] {
  const turns: ImportedTurn[] = [];
  const lines = text.split('\n');
  for (const [i, raw] of lines.entries()) {
    const line = i + 1;
    if (raw.trim() === '') continue;
    let row: unknown;
    try {
      row = JSON.parse(raw);
    } catch {
      throw sourceError(
        source,
        line,
        `not valid JSON (${describeJsonError(raw)}); the turns format has one {"step_id","role","content"} object per line`,
      );
    }
    if (!isRecord(row))
      throw sourceError(source, line, 'expected a JSON object {"step_id","role","content"}');
    const { step_id, role, content } = row;
    if (typeof step_id !== 'number' || !Number.isSafeInteger(step_id) || step_id < 0) {
      throw sourceError(
        source,
        line,
        `"step_id" must be a non-negative integer, got ${JSON.stringify(step_id)}`,
      );
    }
    const prev = turns.at(-1);
    if (prev && step_id <= prev.step_id) {
      throw sourceError(
        source,
        line,
        `"step_id" ${step_id} does not follow ${prev.step_id}; step ids are history positions and must increase`,
      );
    }
    if (typeof role !== 'string' || !ROLES.includes(role)) {
      throw sourceError(
        source,
        line,
        `"role" must be one of ${ROLES.join(', ')}, got ${JSON.stringify(role)}`,
      );
    }
    if (typeof content !== 'string') {
      throw sourceError(
        source,
        line,
        `"content" must be a string, got ${content === null ? 'null' : typeof content}`,
      );
    }
    turns.push({ step_id, role: role as TurnRole, content });
  }
  return turns;
}
