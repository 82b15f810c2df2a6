import { readFileSync } from 'node:fs';
import { UsageError } from '../protocol/errors.js';
import {
  type HistoryRecord,
  type Message,
  parseHistoryRecord,
  recordToMessage,
} from './messages.js';
import type { Session } from './session.js';

/**
 * Parses a turns JSONL file (the `../shared/data` format: one `{step_id, role, content}` a
 * line). Step ids must be consecutive positions. Every problem is one line naming the file
 * line; nothing is returned unless the whole file is valid.
 *
 * @example
 * const records = parseTurnsJsonl(readFileSync('turns.jsonl', 'utf8'), 'turns.jsonl');
 */
export function parseTurnsJsonl(text: string, file: string): HistoryRecord[] {
  const records: HistoryRecord[] = [];
  const lines = text.split('\n');
  lines.forEach((raw, i) => {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line.trim() === '') return;
    const where = `${file} line ${i + 1}`;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      throw new UsageError(
        `${where}: not valid JSON (expected one {"step_id", "role", "content"} object per line)`,
      );
    }
    const r = parseHistoryRecord(value, where);
    const expected = records.length === 0 ? r.step_id : records[records.length - 1]!.step_id + 1;
    if (r.step_id !== expected) {
      throw new UsageError(
        `${where}: step_id ${r.step_id} is out of order: expected ${expected} (step ids are consecutive positions in the history)`,
      );
    }
    records.push(r);
  });
  if (records.length === 0) throw new UsageError(`${file}: no turns (the file is empty)`);
  return records;
}

/**
 * Reads and parses a turns file; a missing file is a one-line usage error.
 *
 * @example
 * const records = readTurnsFile('turns.jsonl');
 */
export function readTurnsFile(file: string): HistoryRecord[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new UsageError(
      `cannot read ${file}: ${code === 'ENOENT' ? 'no such file' : (code ?? String(e))}`,
    );
  }
  return parseTurnsJsonl(text, file);
}

/** One line of `contextfold session --json`: what happened around one incoming prompt. */
export interface TurnReport {
  turn: number;
  step_id: number;
  pack_tokens: number;
  baseline_tokens: number;
  folded: number[];
  paged_in: number[];
  evicted: number[];
  warnings: string[];
}

/**
 * Replays recorded turns through a session: every user message is an incoming prompt
 * (`beforeTurn`), the messages up to the next one are its response (`afterTurn`); messages
 * before the first prompt are appended as they are. The records must start where the
 * session's history ends.
 *
 * @example
 * await runTurns(session, records, (r) => console.log(r.step_id, r.pack_tokens));
 */
export async function runTurns(
  session: Session,
  records: readonly HistoryRecord[],
  onTurn: (report: TurnReport) => void,
): Promise<{ turns: number; messages: number }> {
  const have = session.status().history_length;
  const first = records[0]?.step_id ?? have;
  if (first !== have) {
    throw new UsageError(
      `the turns start at step ${first} but the session in ${session.engine.dir} has ${have} message(s): use a fresh --dir, or pass the turns from step ${have} on`,
    );
  }
  if (session.status().open_turn !== null) {
    throw new UsageError(
      'the session has an open turn (an interrupted run): finish it with afterTurn first',
    );
  }
  let open: { report: Omit<TurnReport, 'evicted'>; response: Message[] } | null = null;
  let turns = 0;
  const close = async (): Promise<void> => {
    if (!open) return;
    const r = await session.afterTurn(open.response);
    onTurn({ ...open.report, evicted: r.evicted });
    open = null;
  };
  for (const rec of records) {
    const m = recordToMessage(rec);
    if (m.role === 'user') {
      await close();
      const pack = await session.beforeTurn(m);
      turns++;
      open = {
        report: {
          turn: pack.turn,
          step_id: pack.step_id,
          pack_tokens: pack.tokens,
          baseline_tokens: pack.metadata.baseline_tokens,
          folded: pack.metadata.folded.map((f) => f.step_id),
          paged_in: pack.metadata.paged_in.map((p) => p.step_id),
          warnings: [...pack.metadata.warnings],
        },
        response: [],
      };
    } else if (open) {
      (open as { response: Message[] }).response.push(m);
    } else {
      await session.append(m);
    }
  }
  await close();
  return { turns, messages: records.length };
}
