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
 * session's history ends; a turn a cut-short run left open is closed by the response they
 * start with (a rerun from that step resumes the run).
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
  // A run cut short between a prompt and its response left that turn open: the records (from
  // the step the session has on) start with its response, which closes it. Its report line
  // was never printed (a line is printed once its response is in) and is not made up here.
  let open: { report: Omit<TurnReport, 'evicted'> | null; response: Message[] } | null =
    session.status().open_turn === null ? null : { report: null, response: [] };
  let turns = 0;
  const close = async (): Promise<void> => {
    if (!open) return;
    const r = await session.afterTurn(open.response);
    if (open.report) onTurn({ ...open.report, evicted: r.evicted });
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
