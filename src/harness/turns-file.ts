import { UsageError } from '../protocol/errors.js';
import { type HistoryRecord, type Message, recordToMessage } from './messages.js';
import type { Session } from './session.js';

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
