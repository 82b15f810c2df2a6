import { UsageError } from '../protocol/errors.js';
import type { HistoryMessage, Message, Role } from './messages.js';
import { toPlainMessage } from './messages.js';
import { renderMessage } from './render.js';

/**
 * The unit that folds, moves and drops as one: a message, or an assistant message together with
 * the tool results that follow it. `stepId` is the history position of its first message.
 */
export interface Turn {
  stepId: number;
  /** History positions of its messages, ascending and contiguous. */
  steps: number[];
  /** Role of its first message (`tool` for tool output with no assistant turn before it). */
  kind: Role;
  messages: HistoryMessage[];
}

function callIds(turn: Turn): Set<string> {
  const ids = new Set<string>();
  for (const m of turn.messages) {
    if (m.role === 'assistant') for (const c of m.toolCalls ?? []) ids.add(c.id);
  }
  return ids;
}

function answeredIds(turn: Turn): Set<string> {
  const ids = new Set<string>();
  for (const m of turn.messages) if (m.role === 'tool' && m.toolCallId) ids.add(m.toolCallId);
  return ids;
}

/**
 * Adds one history message to a turn list (in place): a tool result joins the turn of the
 * assistant message before it; anything else starts a new turn. A tool result naming a call
 * that the preceding assistant turn did not make, or answering a call twice, is refused, so a
 * call and its result can never end up in different turns.
 *
 * @example
 * const turns: Turn[] = [];
 * for (const m of history) addToTurns(turns, m);
 */
export function addToTurns(turns: Turn[], m: HistoryMessage): void {
  const last = turns[turns.length - 1];
  if (m.role === 'tool') {
    const joins = last !== undefined && (last.kind === 'assistant' || last.kind === 'tool');
    if (m.toolCallId !== undefined) {
      if (!joins || last === undefined || !callIds(last).has(m.toolCallId)) {
        throw new UsageError(
          `message ${m.stepId}: tool result answers call id '${m.toolCallId}', but the assistant message right before it made no such call`,
        );
      }
      if (answeredIds(last).has(m.toolCallId)) {
        throw new UsageError(
          `message ${m.stepId}: tool call id '${m.toolCallId}' already has a result`,
        );
      }
    }
    if (joins && last !== undefined) {
      last.messages.push(m);
      last.steps.push(m.stepId);
      return;
    }
  }
  turns.push({ stepId: m.stepId, steps: [m.stepId], kind: m.role, messages: [m] });
}

/**
 * Groups a history into turns (see {@link addToTurns}).
 *
 * @example
 * groupTurns(history).map((t) => t.stepId); // [0, 1, 4, ...]
 */
export function groupTurns(history: readonly HistoryMessage[]): Turn[] {
  const turns: Turn[] = [];
  for (const m of history) addToTurns(turns, m);
  return turns;
}

/** Tool calls of a turn that have no result in it (a declined or interrupted call). */
export function unansweredCalls(turn: Turn): string[] {
  const answered = answeredIds(turn);
  return [...callIds(turn)].filter((id) => !answered.has(id));
}

function isPlain(m: Message): boolean {
  if (m.role === 'assistant') return !m.toolCalls || m.toolCalls.length === 0;
  if (m.role === 'tool') {
    return (
      m.toolCallId === undefined &&
      m.toolName === undefined &&
      m.exitCode === undefined &&
      m.isError === undefined
    );
  }
  return true;
}

/**
 * The raw payload folded into cold storage for a turn: a plain single message is its exact
 * content (byte-for-byte); anything richer is the rendered messages (headers, tool calls as
 * JSON, results), which is what the model saw.
 *
 * @example
 * turnPayload({ stepId: 4, steps: [4], kind: 'user', messages: [m] }); // m.content
 */
export function turnPayload(turn: Turn): string {
  const only = turn.messages[0];
  if (turn.messages.length === 1 && only !== undefined && isPlain(only)) return only.content;
  let out = '';
  for (const m of turn.messages) out += renderMessage(toPlainMessage(m));
  return out;
}
