import type { Message } from '../harness/messages.js';
import type { HistoryTurn } from './case-schema.js';

/** The call id of a turn's tool call (stable: the turn's position). */
export const callId = (turn: number) => `call_${turn}`;

/**
 * A case history as neutral harness messages: per turn the user message, the assistant's tool
 * call, the tool result and the assistant's reply (each only when the turn has it).
 *
 * @example
 * toMessages([{ user: 'run it', tool: { name: 'Bash', input: {}, output: 'ok' } }]).length; // 3
 */
export function toMessages(history: readonly HistoryTurn[]): Message[] {
  const out: Message[] = [];
  history.forEach((t, i) => {
    if (t.user !== undefined) out.push({ role: 'user', content: t.user });
    if (t.tool) {
      out.push({
        role: 'assistant',
        content: '',
        toolCalls: [{ id: callId(i), name: t.tool.name, input: t.tool.input }],
      });
      out.push({
        role: 'tool',
        content: t.tool.output,
        toolCallId: callId(i),
        toolName: t.tool.name,
        ...(t.tool.is_error ? { isError: true } : {}),
      });
    }
    if (t.assistant !== undefined) out.push({ role: 'assistant', content: t.assistant });
  });
  return out;
}

/** One archived turn as a host that folds through a tool would send it (MCP `fold_turn`). */
export interface FoldTurnArgs {
  step_id: number;
  summary: string;
  content: string;
}

/**
 * The archived turns of a history as `fold_turn` arguments: the step id is the position of the
 * tool call in the message history ({@link toMessages}), the content the call and its output.
 */
export function toFoldTurns(history: readonly HistoryTurn[]): FoldTurnArgs[] {
  const out: FoldTurnArgs[] = [];
  let position = 0;
  history.forEach((t) => {
    if (t.user !== undefined) position++;
    if (t.tool) {
      if (t.archived === true) {
        out.push({
          step_id: position,
          summary: `${t.tool.name} ${JSON.stringify(t.tool.input)}`.slice(0, 200),
          content: `${t.tool.name} ${JSON.stringify(t.tool.input)}\n${t.tool.output}`,
        });
      }
      position += 2;
    }
    if (t.assistant !== undefined) position++;
  });
  return out;
}
