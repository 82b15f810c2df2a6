import {
  type HistoryMessage,
  type HistoryRecord,
  parseHistoryRecord,
  recordToMessage,
} from '../harness/messages.js';
import { addToTurns, type Turn } from '../harness/turns.js';
import { readSourceText, sourceName } from './read-source.js';
import { isRecord, parseJsonLine, sourceError } from './source-error.js';
import type { ImportedTurn, TurnRole } from './turn.js';

const ROLES: readonly string[] = ['system', 'user', 'assistant', 'tool'];

/**
 * How the `step_id` of each line must relate to the others:
 * - `positional`: equal to the row's 0-based position among the non-blank lines (a whole history);
 * - `consecutive`: each one more than the one before, from any start (a history's continuation);
 * - `increasing`: strictly increasing, gaps allowed (a selection of turns);
 * - `any`: no order rule (a batch of independent folds).
 */
export type StepIdRule = 'positional' | 'consecutive' | 'increasing' | 'any';

/** One validated JSONL row, handed to {@link ParseTurnsOptions.parseRow}. */
export interface TurnsRow {
  /** The parsed object; `step_id` is already checked to be a non-negative integer. */
  row: Record<string, unknown>;
  step_id: number;
  /** File name and line, for error messages (`where` is `source:line`). */
  source: string;
  line: number;
  where: string;
}

/** Options of {@link parseTurnsJsonl} and {@link readTurnsJsonl}. */
export interface ParseTurnsOptions<T = ImportedTurn> {
  /** File name (or `-`) used in error messages. */
  source: string;
  /** Step id order rule. Default `increasing`. */
  stepIds?: StepIdRule;
  /** A file without a single row is an error. Default `false` (an empty history is allowed). */
  requireTurns?: boolean;
  /**
   * Builds one result from a row (default: the `{step_id, role, content}` turn, extra keys
   * ignored). Throw a `UsageError` naming `row.where` for a bad row.
   */
  parseRow?: (row: TurnsRow) => T;
  /** The keys of a row as error messages name them. Default `{"step_id","role","content"}`. */
  rowShape?: string;
}

function turnOf({ row, step_id, source, line }: TurnsRow): ImportedTurn {
  const { role, content } = row;
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
  return { step_id, role: role as TurnRole, content };
}

function orderProblem(
  rule: StepIdRule,
  id: number,
  prev: number | null,
  index: number,
): string | null {
  switch (rule) {
    case 'positional':
      return id === index
        ? null
        : `"step_id" ${id} is out of order: expected ${index} (step ids are 0-based turn positions)`;
    case 'consecutive':
      return prev === null || id === prev + 1
        ? null
        : `"step_id" ${id} is out of order: expected ${prev + 1} (step ids are consecutive turn positions)`;
    case 'increasing':
      return prev === null || id > prev
        ? null
        : `"step_id" ${id} does not follow ${prev}; step ids are turn positions and must increase`;
    case 'any':
      return null;
  }
}

/** Parses one line into an object with a valid `step_id`, or throws naming the line. */
function rowOf(raw: string, source: string, line: number, shape: string): Record<string, unknown> {
  const value = parseJsonLine(
    raw,
    source,
    line,
    `the turns format has one ${shape} object per line`,
  );
  if (!isRecord(value)) throw sourceError(source, line, `expected a JSON object ${shape}`);
  const id = value.step_id;
  if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 0) {
    throw sourceError(
      source,
      line,
      `"step_id" must be a non-negative integer, got ${JSON.stringify(id)}`,
    );
  }
  return value;
}

/**
 * The one reader of the turns JSONL format (`../shared/data/trajectories`, `contextfold import
 * --format turns`, `contextfold session`, `contextfold fold --jsonl`, the eval): one
 * `{ step_id, role, content }` object a line, blank lines ignored, a trailing CR dropped. Every
 * problem is one `UsageError` naming `source:line`; nothing is returned unless every line is
 * valid.
 *
 * @example
 * parseTurnsJsonl('{"step_id":0,"role":"user","content":"hi"}\n', { source: 'run.jsonl', stepIds: 'positional' });
 * // [{ step_id: 0, role: 'user', content: 'hi' }]
 */
export function parseTurnsJsonl<T = ImportedTurn>(
  text: string,
  options: ParseTurnsOptions<T>,
): T[] {
  const { source, stepIds = 'increasing' } = options;
  const parseRow = options.parseRow ?? (turnOf as unknown as (row: TurnsRow) => T);
  const out: T[] = [];
  let prev: number | null = null;
  for (const [i, rawLine] of text.split('\n').entries()) {
    const raw = rawLine.endsWith('\r') ? rawLine.slice(0, -1) : rawLine;
    if (raw.trim() === '') continue;
    const line = i + 1;
    const row = rowOf(raw, source, line, options.rowShape ?? '{"step_id","role","content"}');
    const step_id = row.step_id as number;
    const problem = orderProblem(stepIds, step_id, prev, out.length);
    if (problem !== null) throw sourceError(source, line, problem);
    out.push(parseRow({ row, step_id, source, line, where: `${source}:${line}` }));
    prev = step_id;
  }
  if (options.requireTurns && out.length === 0) {
    throw sourceError(source, null, 'no turns (the file is empty)');
  }
  return out;
}

/**
 * Reads a turns JSONL file (standard input for `-`; gzip and a BOM handled as by every importer) and parses it with
 * {@link parseTurnsJsonl}. A missing or unreadable file is a one-line `UsageError`.
 *
 * @example
 * const turns = readTurnsJsonl('run.jsonl', { stepIds: 'positional' });
 */
export function readTurnsJsonl<T = ImportedTurn>(
  file: string,
  options: Omit<ParseTurnsOptions<T>, 'source'> & { source?: string } = {},
): T[] {
  const source = options.source ?? sourceName(file);
  return parseTurnsJsonl(readSourceText(file), { ...options, source });
}

/**
 * A {@link ParseTurnsOptions.parseRow} for session histories: the row as a harness
 * `HistoryRecord` (the turns format plus optional tool fields), validated at the boundary.
 *
 * @example
 * const records = readTurnsJsonl('turns.jsonl', { stepIds: 'consecutive', parseRow: historyRecordRow });
 */
export function historyRecordRow(r: TurnsRow): HistoryRecord {
  return parseHistoryRecord(r.row, r.where);
}

/**
 * Reads a session history in the turns format (`contextfold session`): consecutive step ids,
 * at least one row, each row a harness `HistoryRecord`.
 *
 * @example
 * await runTurns(session, readHistoryRecords('turns.jsonl'), (r) => console.log(r.step_id));
 */
export function readHistoryRecords(file: string): HistoryRecord[] {
  const lines = new Map<HistoryRecord, number>();
  const records = readTurnsJsonl(file, {
    stepIds: 'consecutive',
    requireTurns: true,
    parseRow: (r) => {
      const record = historyRecordRow(r);
      lines.set(record, r.line);
      return record;
    },
  });
  checkToolResults(records, sourceName(file), lines);
  return records;
}

/**
 * Every tool result answers a call of the assistant message before it, once: checked over the
 * whole file, so a bad pairing stops the run before anything is written. Tool results before
 * the file's first other message may answer a call already in the session; `append` checks them.
 */
function checkToolResults(
  records: readonly HistoryRecord[],
  file: string,
  lines: ReadonlyMap<HistoryRecord, number>,
): void {
  const turns: Turn[] = [];
  for (const r of records) {
    const m = { ...recordToMessage(r), stepId: r.step_id, timestamp: '' } as HistoryMessage;
    if (turns.length === 0 && m.role === 'tool') continue;
    try {
      addToTurns(turns, m);
    } catch (e) {
      const problem = (e as Error).message.replace(/^message \d+: /, '');
      throw sourceError(file, lines.get(r) ?? null, problem);
    }
  }
}
