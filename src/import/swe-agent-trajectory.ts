import { type BuilderMessage, ConversationBuilder } from './conversation-builder.js';
import { messageLines, parseJsonDocument } from './json-source.js';
import { isRecord, sourceError } from './source-error.js';
import type { ImportedTurn } from './turn.js';

type Fail = (problem: string) => never;

/** The text of a history message: a string, or (SWE-agent 1.x) a list of `{type: 'text', text}`. */
function messageText(content: unknown, fail: Fail): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) fail('"content" must be a string or a list of text blocks');
  return (content as unknown[])
    .map((b) => {
      if (isRecord(b) && typeof b.text === 'string') return b.text;
      return fail('a content block without "text"');
    })
    .join('\n');
}

/**
 * One history message as a builder message: the model's step is its reasoning (`thought`, else
 * the message text) and a call of its `action`, which the observation that follows answers.
 */
function toBuilder(msg: Record<string, unknown>, i: number, fail: Fail): BuilderMessage {
  const role = msg.role;
  if (role !== 'system' && role !== 'user' && role !== 'assistant' && role !== 'tool') {
    fail(`"role" must be "system", "user", "assistant" or "tool", got ${JSON.stringify(role)}`);
  }
  const text = messageText(msg.content, fail);
  if (role === 'assistant' && typeof msg.action === 'string' && msg.action.trim() !== '') {
    const thought = typeof msg.thought === 'string' ? msg.thought : text;
    return {
      role: 'assistant',
      parts: [
        ...(thought.trim() === '' ? [] : [{ kind: 'text' as const, text: thought }]),
        {
          kind: 'tool_use',
          id: `action-${i}`,
          name: commandName(msg.action),
          input: msg.action.trimEnd(),
        },
      ],
    };
  }
  return { role: role === 'tool' ? 'user' : role, parts: [{ kind: 'text', text }] };
}

/** The command an action runs (its first word: `open`, `edit`, `python3`, `submit`…). */
function commandName(action: string): string {
  return action.trim().split(/\s+/, 1)[0]!;
}

/** True for a user (or 1.x tool) message that is the observation of the last action. */
function isObservation(msg: Record<string, unknown>, pending: string | null): boolean {
  if (pending === null) return false;
  if (typeof msg.message_type === 'string') return msg.message_type === 'observation';
  return msg.role === 'user' || msg.role === 'tool';
}

/**
 * Parses a SWE-agent trajectory (`.traj`, a JSON object whose `history` holds the messages the
 * model saw): the system prompt and the task are turns of their own, and each step of the agent
 * (its reasoning and its action) is one turn together with the observation the action produced,
 * so a paged-in command always comes with its output. Versions 0.x (string contents) and 1.x
 * (text blocks, `message_type`) are read.
 *
 * @example
 * parseSweAgentTrajectory('{"history": [{"role": "user", "content": "Fix it"}]}', 'run.traj');
 * // [{ step_id: 0, role: 'user', content: 'Fix it' }]
 */
export function parseSweAgentTrajectory(text: string, source: string): ImportedTurn[] {
  const root = parseJsonDocument(text, source);
  if (!isRecord(root) || !Array.isArray(root.history)) {
    throw sourceError(source, null, 'not a SWE-agent trajectory: no "history" array of messages');
  }
  const builder = new ConversationBuilder();
  const turns: ImportedTurn[] = [];
  let pending: string | null = null;
  let lines: number[] | null = null;
  for (const [i, m] of root.history.entries()) {
    const fail: Fail = (problem) => {
      lines ??= messageLines(text, 'history');
      throw sourceError(source, lines[i] ?? null, `history message ${i}: ${problem}`);
    };
    if (!isRecord(m)) fail('is not an object');
    const msg = m as Record<string, unknown>;
    if (isObservation(msg, pending)) {
      const content = messageText(msg.content, fail);
      const part = { kind: 'tool_result' as const, toolUseId: pending!, content, isError: false };
      turns.push(...builder.push({ role: 'user', parts: [part] }));
      pending = null;
      continue;
    }
    const b = toBuilder(msg, i, fail);
    const call = b.parts.find((p) => p.kind === 'tool_use');
    pending = call ? call.id : null;
    turns.push(...builder.push(b));
  }
  turns.push(...builder.flush());
  return turns;
}
