import { UsageError } from '../protocol/errors.js';
import type { HistoryMessage, Message, Role } from './messages.js';
import { toPlainMessage } from './messages.js';
import { renderMessage } from './render.js';
import { renderToolInput, toolResultLabel, toolUseLabel } from './turn-text.js';

/**
 * How a history's turns get their step ids (docs/store-format.md, "Step ids and payloads"):
 * - `turns` (the rule of every path): the turn's position among the turns, `0, 1, 2, …`, a
 *   system message counting as one turn, an assistant message and its tool results as one;
 * - `positions`: the history position of the turn's first message (sessions recorded before
 *   the rule was unified: their `session_opened` config has no `step_ids`).
 */
export type TurnStepIds = 'turns' | 'positions';

/**
 * The unit that folds, moves and drops as one: a message, or an assistant message together with
 * the tool results that follow it. `stepId` is its step id (see {@link TurnStepIds}); `steps`
 * are the history positions of its messages.
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
export function addToTurns(turns: Turn[], m: HistoryMessage, stepIds: TurnStepIds = 'turns'): void {
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
  const stepId = stepIds === 'turns' ? turns.length : m.stepId;
  turns.push({ stepId, steps: [m.stepId], kind: m.role, messages: [m] });
}

/**
 * Groups a whole history into turns (see {@link addToTurns}).
 *
 * @example
 * groupTurns(history).map((t) => t.stepId); // [0, 1, 2, ...]
 */
export function groupTurns(
  history: readonly HistoryMessage[],
  stepIds: TurnStepIds = 'turns',
): Turn[] {
  const turns: Turn[] = [];
  for (const m of history) addToTurns(turns, m, stepIds);
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

/** A tool message's result label; `id` is its call's id (or none, for plain tool output). */
function resultLabel(m: Extract<Message, { role: 'tool' }>, callName: string | null): string {
  const name = callName ?? m.toolName ?? null;
  if (m.toolCallId !== undefined) {
    return toolResultLabel(name, m.toolCallId, m.isError === true, m.exitCode);
  }
  const exit = m.exitCode === undefined ? '' : ` exit=${m.exitCode}`;
  return `[tool_result${name === null ? '' : `: ${name}`}${exit}${m.isError === true ? ' error' : ''}]`;
}

/**
 * The turn as the importers render it (`ConversationBuilder`): the assistant's text, then each
 * tool call (`[tool_use: name id=…]` and its JSON input) followed by its result
 * (`[tool_result: name id=…]` and the output), parts joined by a newline.
 */
function importedForm(turn: Turn): string {
  const parts: string[] = [];
  const calls = new Map<string, { index: number; name: string }>();
  for (const m of turn.messages) {
    if (m.role === 'assistant') {
      if (m.content !== '') parts.push(m.content);
      for (const c of m.toolCalls ?? []) {
        calls.set(c.id, { index: parts.length, name: c.name });
        parts.push(`${toolUseLabel(c.name, c.id)}\n${renderToolInput(c.input)}`);
      }
    } else if (m.role === 'tool') {
      const call = m.toolCallId === undefined ? undefined : calls.get(m.toolCallId);
      const text = `${resultLabel(m, call?.name ?? null)}\n${m.content}`;
      if (call) parts[call.index] = `${parts[call.index]}\n${text}`;
      else parts.push(text);
    } else parts.push(m.content);
  }
  return parts.join('\n');
}

/**
 * The raw payload folded into cold storage for a turn. A plain single message is its exact
 * content (byte-for-byte). Anything richer is, under the `turns` rule, the text the importers
 * and the Claude Code hook fold for the same turn (tool calls and their results as
 * `[tool_use: …]` / `[tool_result: …]` parts), so every path archives the same bytes; under
 * `positions` (sessions recorded before the rule was unified) the rendered messages as the
 * model saw them (headers, tool calls as JSON), as those sessions folded them.
 *
 * @example
 * turnPayload({ stepId: 4, steps: [4], kind: 'user', messages: [m] }); // m.content
 */
export function turnPayload(turn: Turn, stepIds: TurnStepIds = 'turns'): string {
  const only = turn.messages[0];
  if (turn.messages.length === 1 && only !== undefined && isPlain(only)) return only.content;
  if (stepIds === 'turns') return importedForm(turn);
  let out = '';
  for (const m of turn.messages) out += renderMessage(toPlainMessage(m));
  return out;
}
