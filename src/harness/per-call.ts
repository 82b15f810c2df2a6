import { UsageError } from '../protocol/errors.js';
import { stripArchivedBlocks } from './archived-block.js';
import { type HistoryRecord, type Message, recordToMessage } from './messages.js';
import type { ContextPack } from './pack.js';
import { stableJson } from './render.js';
import type { Session } from './session.js';

/**
 * What happened around one model call: one line of `contextfold session --per-call --json`,
 * and the decisions part of every `contextfold proxy` log line (the same function makes both).
 */
export interface CallReport {
  /** The session's turn for this call (one turn per model call). */
  turn: number;
  /** History position of the prompt, or of the next message for a tool-loop continuation. */
  step_id: number;
  /** Messages in the history the client sent (what an unmodified client resends every call). */
  history_messages: number;
  /** Tokens of that whole history rendered verbatim: what the call would cost without folding. */
  history_tokens: number;
  /** Tokens of the pack actually sent. */
  pack_tokens: number;
  /** Pack tokens without this call's pages (what the next call returns to, CONF-07). */
  baseline_tokens: number;
  /**
   * Tokens of the parts never dropped: the live turn (L0, without pages) and the pinned layer
   * (L3). A pack goes over budget only when these alone do not fit.
   */
  live_tokens: number;
  budget: number;
  /** Turns folded while preparing this call (by first step). */
  folded: number[];
  /** Steps paged in for this call only. */
  paged_in: number[];
  /**
   * Live messages sent as head-and-tail excerpts because the live turn alone exceeded the
   * budget (the session keeps them whole).
   */
  excerpted: number[];
  /** Steps evicted once the call ended (this call's pages). */
  evicted: number[];
  warnings: string[];
}

/** The comparable form of a message as a session stores it (step id and time left out). */
function messageKey(m: Message): string {
  const { timestamp: _t, stepId: _s, ...rest } = m as Message & { stepId?: number };
  return stableJson(rest);
}

function sameMessage(stored: Message, incoming: Message): boolean {
  if (stored.role !== incoming.role || typeof incoming.content !== 'string') return false;
  const content = incoming.content.includes('<archived_record ')
    ? stripArchivedBlocks(incoming.content).text
    : incoming.content;
  if (stored.content !== content) return false;
  return messageKey({ ...stored, content: '' }) === messageKey({ ...incoming, content: '' });
}

/**
 * Where a client's full history stops continuing what a session recorded: the first position
 * whose message differs (or where the client's history ends early), or null when the session's
 * history is a prefix of it. Archived blocks in the client's text are ignored, as the session
 * strips them.
 *
 * @example
 * divergence(session.history(), incoming); // null: append incoming.slice(history.length)
 */
export function divergence(
  stored: readonly Message[],
  incoming: readonly Message[],
): number | null {
  for (let i = 0; i < stored.length; i++) {
    const m = incoming[i];
    if (m === undefined || !sameMessage(stored[i]!, m)) return i;
  }
  return null;
}

/**
 * How a client's full history goes on from what a session recorded: `at`, where it stops
 * continuing it (as {@link divergence}; null when it continues), and `system`, the positions of
 * the leading system messages whose text the client changed while the rest continues (the
 * system prompt is the app's current instructions, not a turn). A system message after the
 * first other message must stay as it was. `same` compares a recorded message with the
 * client's (default: as {@link divergence} does).
 *
 * @example
 * continuation(session.history(), incoming); // { at: null, system: [0] }: a new system prompt
 */
export function continuation(
  stored: readonly Message[],
  incoming: readonly Message[],
  same: (stored: Message, incoming: Message) => boolean = sameMessage,
): { at: number | null; system: number[] } {
  const lead = stored.findIndex((m) => m.role !== 'system');
  const leading = lead === -1 ? stored.length : lead;
  const system: number[] = [];
  for (let i = 0; i < stored.length; i++) {
    const m = incoming[i];
    if (m === undefined) return { at: i, system: [] };
    if (same(stored[i]!, m)) continue;
    if (i < leading && m.role === 'system' && typeof m.content === 'string') system.push(i);
    else return { at: i, system: [] };
  }
  return { at: null, system };
}

/**
 * What a refusal at `at` (a {@link continuation} that stops there) adds when a system message is
 * the difference: the system prompt's text may change, but a system message cannot be added or
 * removed, nor one after the first other message change. Empty otherwise.
 *
 * @example
 * systemNote(session.history(), incoming, at); // ' (the system prompt: …)'
 */
export function systemNote(
  stored: readonly Message[],
  incoming: readonly Message[],
  at: number,
): string {
  if (stored[at]?.role !== 'system' && incoming[at]?.role !== 'system') return '';
  const lead = stored.findIndex((m) => m.role !== 'system');
  if (lead !== -1 && at > lead) {
    return ' (a system message after the first other message must stay as it was)';
  }
  return ' (the system prompt: its text may change from call to call, but a system message cannot be added or removed within a session; start a new session for that)';
}

/**
 * Checks that a client's full history continues a session (compared in the form the session
 * records messages in) and records the new text of a changed system prompt
 * ({@link continuation}, {@link Session.changeSystem}; a turn still open is closed first).
 * Returns where the history stops continuing the session (nothing recorded then), or null.
 * `contextfold proxy`, {@link beginCall} and the AI SDK middleware all go through it.
 *
 * @example
 * if ((await continueSession(session, messages)) === null) await session.append(messages.slice(session.status().history_length));
 */
export async function continueSession(
  session: Session,
  history: readonly Message[],
  same?: (stored: Message, incoming: Message) => boolean,
): Promise<number | null> {
  const stored = session.history();
  // The session records messages redacted: compare the caller's copy in that form.
  const seen = await session.recordedForm(history.slice(0, stored.length));
  const { at, system } = continuation(stored, seen, same);
  if (at !== null) return at;
  if (system.length > 0) {
    if (session.status().open_turn !== null) await session.afterTurn();
    await session.changeSystem(system.map((i) => ({ step: i, content: history[i]!.content })));
  }
  return null;
}

/**
 * The start of one model call of a client that resends its whole history every call (an HTTP
 * API client, a replayed transcript): closes a call left open, appends the messages the session
 * has not seen, and builds the pack. The live layer is what the history ends with: the newest
 * user message, or the pending tool output of a tool loop; both are scanned for page-in.
 * `contextfold proxy` and `contextfold session --per-call` both go through this function, so
 * the same history gives the same decisions.
 *
 * @example
 * const pack = await beginCall(session, messages);
 * const answer = await callModel(pack.messages);
 * await endCall(session);
 */
export async function beginCall(
  session: Session,
  history: readonly Message[],
): Promise<ContextPack> {
  if (session.status().open_turn !== null) await session.afterTurn();
  const at = await continueSession(session, history);
  if (at !== null) {
    const note = systemNote(session.history(), history, at);
    throw new UsageError(
      `the history does not continue this session: message ${at} ${at < history.length ? 'differs from' : 'is missing, the session has'} its recorded message ${at}${note}; use a new session for another conversation`,
      { step: at },
    );
  }
  const fresh = history.slice(session.status().history_length);
  if (fresh.length > 0) await session.append(fresh);
  return session.beforeTurn();
}

/**
 * The end of a model call (answered, failed or abandoned): this call's pages leave (CONF-07).
 * Returns the evicted steps; nothing when no call is open.
 *
 * @example
 * const pack = await beginCall(session, messages);
 * try { await callModel(pack.messages); } finally { await endCall(session); }
 */
export async function endCall(session: Session): Promise<number[]> {
  if (session.status().open_turn === null) return [];
  return (await session.afterTurn()).evicted;
}

/** The report of a call from its pack (`evicted` is filled in by {@link endCall}). */
export function callReport(session: Session, pack: ContextPack): CallReport {
  return {
    turn: pack.turn,
    step_id: pack.step_id,
    history_messages: session.status().history_length,
    history_tokens: session.historyTokens(),
    pack_tokens: pack.tokens,
    baseline_tokens: pack.metadata.baseline_tokens,
    live_tokens: pack.entries
      .filter((e) => e.layer === 'L3' || (e.layer === 'L0' && e.kind !== 'page'))
      .reduce((n, e) => n + e.tokens, 0),
    budget: pack.budget,
    folded: pack.metadata.folded.map((f) => f.step_id),
    paged_in: pack.metadata.paged_in.map((p) => p.step_id),
    excerpted: pack.metadata.live_excerpts.map((e) => e.step_id),
    evicted: [],
    warnings: [...pack.metadata.warnings],
  };
}

/**
 * The model calls of a recorded history: before every run of assistant messages (one response
 * may be several transcript rows), as the history positions the call sees (`[0, at)`).
 *
 * @example
 * modelCalls(['user', 'assistant', 'tool', 'assistant'].map((role) => ({ role }))); // [1, 3]
 */
export function modelCalls(messages: readonly { role: string }[]): number[] {
  const out: number[] = [];
  messages.forEach((m, i) => {
    if (i > 0 && m.role === 'assistant' && messages[i - 1]!.role !== 'assistant') out.push(i);
  });
  return out;
}

/** Totals of a per-call run. */
export interface PerCallTotals {
  calls: number;
  messages: number;
  /** Sum over calls of the full history's tokens: what an unmodified client sends. */
  history_tokens: number;
  /** Sum over calls of the pack tokens actually sent. */
  sent_tokens: number;
  /** `sent_tokens / history_tokens`. */
  sent_ratio: number;
  /** Tokens of the whole history at its last call. */
  final_history_tokens: number;
  largest_pack: number;
  over_budget_calls: number;
  /** Calls over budget whose live turn and pinned layer alone exceed it (nothing else was sent). */
  over_budget_live_calls: number;
  /** Calls whose live turn was sent as head-and-tail excerpts to fit the budget. */
  excerpted_calls: number;
}

/**
 * Replays a recorded history call by call (`contextfold session --per-call`): a pack is built
 * before every model call, tool-loop continuations included, from the history up to that
 * call, exactly as `contextfold proxy` builds it when a client sends that history. The records
 * must be a whole history (from step 0) and the session must be new.
 *
 * @example
 * const totals = await runPerCall(session, readHistoryRecords('turns.jsonl'), (r) => console.log(r));
 */
export async function runPerCall(
  session: Session,
  records: readonly HistoryRecord[],
  onCall: (report: CallReport) => void,
): Promise<PerCallTotals> {
  if (records[0]?.step_id !== 0) {
    throw new UsageError(
      `--per-call needs a whole history: the turns start at step ${records[0]?.step_id ?? '?'}, not 0`,
    );
  }
  const have = session.status().history_length;
  if (have !== 0) {
    throw new UsageError(
      `the session in ${session.engine.dir} already has ${have} message(s): use a fresh --dir for a per-call replay`,
    );
  }
  const messages = records.map(recordToMessage);
  const totals: PerCallTotals = {
    calls: 0,
    messages: messages.length,
    history_tokens: 0,
    sent_tokens: 0,
    sent_ratio: 0,
    final_history_tokens: 0,
    largest_pack: 0,
    over_budget_calls: 0,
    over_budget_live_calls: 0,
    excerpted_calls: 0,
  };
  for (const at of modelCalls(messages)) {
    const pack = await beginCall(session, messages.slice(0, at));
    const report = callReport(session, pack);
    report.evicted = await endCall(session);
    totals.calls++;
    totals.history_tokens += report.history_tokens;
    totals.sent_tokens += report.pack_tokens;
    totals.final_history_tokens = report.history_tokens;
    totals.largest_pack = Math.max(totals.largest_pack, report.pack_tokens);
    if (pack.metadata.over_budget) totals.over_budget_calls++;
    if (pack.metadata.over_budget && report.live_tokens > report.budget) {
      totals.over_budget_live_calls++;
    }
    if (report.excerpted.length > 0) totals.excerpted_calls++;
    onCall(report);
  }
  totals.sent_ratio =
    totals.history_tokens === 0
      ? 0
      : Number((totals.sent_tokens / totals.history_tokens).toFixed(4));
  return totals;
}
