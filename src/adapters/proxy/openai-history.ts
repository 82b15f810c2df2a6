import type OpenAI from 'openai';
import type { Message } from '../../harness/messages.js';
import type { Fail } from '../../import/anthropic-blocks.js';
import { openAiMessageParts } from '../../import/openai-chat.js';
import { isRecord } from '../../import/source-error.js';
import { UsageError } from '../../protocol/errors.js';
import { type ClientHistory, HistoryBuilder, partText, toolMessage } from './client-history.js';

/** An OpenAI Chat Completions request body (`POST /v1/chat/completions`) as the proxy reads it. */
export type OpenAiBody = Omit<OpenAI.ChatCompletionCreateParams, 'messages'> & {
  messages: OpenAI.ChatCompletionMessageParam[];
  [key: string]: unknown;
};

/**
 * The neutral history of an OpenAI Chat Completions request: one neutral message per message,
 * reduced by the importer's {@link openAiMessageParts} (`system`/`developer` pinned, `tool` and
 * legacy `function` results as `tool` messages that join the turn of their call). Throws a
 * one-line {@link UsageError} on a structurally invalid request.
 *
 * @example
 * openAiHistory({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
 */
export function openAiHistory(body: OpenAiBody): ClientHistory {
  const out = new HistoryBuilder();
  let legacy: string | null = null;
  body.messages.forEach((m: unknown, i) => {
    const fail: Fail = (problem) => {
      throw new UsageError(`messages[${i}]: ${problem}`);
    };
    if (!isRecord(m)) fail('is not an object');
    const r = openAiMessageParts(m as Record<string, unknown>, i, legacy, fail);
    legacy = r.legacyCall;
    const { role, parts } = r.message;
    const only = parts.length === 1 ? parts[0]! : null;
    const neutral: Message =
      only?.kind === 'tool_result'
        ? toolMessage(only, out.calls)
        : { role, content: parts.map((p) => partText(p, out.calls)).join('\n') };
    out.push(neutral, { message: i, blocks: null });
  });
  return out.done();
}
