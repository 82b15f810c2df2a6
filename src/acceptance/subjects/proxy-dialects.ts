import type { HistoryTurn } from '../case-schema.js';
import { callId } from '../history.js';

/** The model APIs the proxy folds, as a client speaks them. */
export type Dialect = 'anthropic' | 'openai';

type Json = Record<string, unknown>;

/** How a client of one dialect writes a conversation and reads the answer. */
export interface DialectClient {
  /** The request path below the proxy's base URL. */
  path: string;
  /** Headers the provider's SDK sends (a placeholder key: the fake model API checks nothing). */
  headers: Record<string, string>;
  /** A case history as this API's messages. */
  history(turns: readonly HistoryTurn[]): Json[];
  /** A user prompt as one message. */
  prompt(text: string): Json;
  /** The request body for these messages. */
  body(messages: readonly Json[]): Json;
  /** The assistant message a client appends to its history from the answer. */
  reply(answer: Json): Json;
}

/**
 * A case history as a dialect's messages: each turn's user text, its tool call and result (as
 * `call` writes them, with the turn's call id), then its assistant text.
 */
function historyOf(
  turns: readonly HistoryTurn[],
  call: (id: string, tool: NonNullable<HistoryTurn['tool']>) => Json[],
): Json[] {
  return turns.flatMap((t, i) => {
    const out: Json[] = [];
    if (t.user !== undefined) out.push({ role: 'user', content: t.user });
    if (t.tool) out.push(...call(callId(i), t.tool));
    if (t.assistant !== undefined) out.push({ role: 'assistant', content: t.assistant });
    return out;
  });
}

/** Anthropic Messages: tool calls are `tool_use` blocks, their results `tool_result` blocks. */
const anthropic: DialectClient = {
  path: '/v1/messages',
  headers: { 'x-api-key': 'acceptance-key', 'anthropic-version': '2023-06-01' },
  history: (turns) =>
    historyOf(turns, (id, { name, input, output, is_error }) => [
      { role: 'assistant', content: [{ type: 'tool_use', id, name, input }] },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: id,
            content: output,
            ...(is_error ? { is_error: true } : {}),
          },
        ],
      },
    ]),
  prompt: (text) => ({ role: 'user', content: text }),
  body: (messages) => ({ model: 'acceptance-model', max_tokens: 64, messages }),
  reply: (answer) => ({ role: 'assistant', content: answer.content }),
};

/** OpenAI Chat Completions: tool calls on the assistant message, results as `tool` messages. */
const openai: DialectClient = {
  path: '/v1/chat/completions',
  headers: { authorization: 'Bearer acceptance-key' },
  history: (turns) =>
    historyOf(turns, (id, { name, input, output }) => [
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id, type: 'function', function: { name, arguments: JSON.stringify(input) } },
        ],
      },
      { role: 'tool', tool_call_id: id, content: output },
    ]),
  prompt: (text) => ({ role: 'user', content: text }),
  body: (messages) => ({ model: 'acceptance-model', messages }),
  reply(answer) {
    const choice = (answer.choices as { message: { content: string | null } }[] | undefined)?.[0];
    return { role: 'assistant', content: choice?.message.content ?? '' };
  },
};

/** The client of each dialect. */
export const DIALECTS: Record<Dialect, DialectClient> = { anthropic, openai };

/**
 * Every string of a JSON request body, in document order, one per line: the text the model
 * receives (message text, tool inputs and results, system prompts, and every other field), with
 * its bytes as they are, not as JSON escapes them.
 *
 * @example
 * bodyText(Buffer.from('{"messages":[{"role":"user","content":"a\\r\\nb"}]}')); // 'user\na\r\nb'
 */
export function bodyText(body: Buffer): string {
  const out: string[] = [];
  const walk = (v: unknown): void => {
    if (typeof v === 'string') out.push(v);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v !== null && typeof v === 'object') Object.values(v).forEach(walk);
  };
  walk(JSON.parse(body.toString('utf8')));
  return out.join('\n');
}
