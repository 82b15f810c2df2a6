import type Anthropic from '@anthropic-ai/sdk';
import { anthropicParts, type Fail } from '../../import/anthropic-blocks.js';
import type { MessagePart } from '../../import/conversation-builder.js';
import { isRecord } from '../../import/source-error.js';
import { UsageError } from '../../protocol/errors.js';
import { type ClientHistory, HistoryBuilder, partText, toolMessage } from './client-history.js';

/** An Anthropic Messages request body (`POST /v1/messages`, `count_tokens`) as the proxy reads it. */
export type AnthropicBody = Omit<Anthropic.MessageCreateParams, 'messages' | 'system'> & {
  messages: Anthropic.MessageParam[];
  system?: string | Anthropic.TextBlockParam[];
  [key: string]: unknown;
};

function failAt(where: string): Fail {
  return (problem) => {
    throw new UsageError(`${where}: ${problem}`);
  };
}

/** Each content block reduced to its one part (string content is one text part). */
function blockParts(content: unknown, fail: Fail): MessagePart[] {
  if (typeof content === 'string') return anthropicParts(content, fail);
  if (!Array.isArray(content)) fail('"content" must be a string or an array of content blocks');
  return (content as unknown[]).map((block, b) => {
    const parts = anthropicParts([block], (p) =>
      fail(p.replace('content block 0', `content block ${b}`)),
    );
    if (parts.length !== 1) fail(`content block ${b} did not reduce to one part`);
    return parts[0]!;
  });
}

function systemText(system: unknown): string {
  const fail = failAt('system');
  return blockParts(system, fail)
    .map((p) => (p.kind === 'text' ? p.text : ''))
    .join('\n');
}

/** A user message: each tool result is a `tool` message, each run of other blocks a `user` one. */
function pushUser(out: HistoryBuilder, parts: MessagePart[], index: number, whole: boolean): void {
  let run: number[] = [];
  const flush = (): void => {
    if (run.length === 0) return;
    const text = run.map((b) => partText(parts[b]!, out.calls)).join('\n');
    out.push({ role: 'user', content: text }, { message: index, blocks: whole ? null : run });
    run = [];
  };
  parts.forEach((p, b) => {
    if (p.kind !== 'tool_result') {
      run.push(b);
      return;
    }
    flush();
    out.push(toolMessage(p, out.calls), { message: index, blocks: [b] });
  });
  flush();
  if (parts.length === 0) out.push({ role: 'user', content: '' }, { message: index, blocks: [] });
}

/**
 * The neutral history of an Anthropic Messages request: the top-level `system` (a pinned
 * system message), then one neutral message per message, except that every `tool_result`
 * block is its own `tool` message (so it joins the turn of the call it answers). Blocks are
 * reduced by the importer's {@link anthropicParts}; what it does not know is kept as labelled
 * JSON. Throws a one-line {@link UsageError} on a structurally invalid request.
 *
 * @example
 * anthropicHistory({ model: 'm', max_tokens: 9, messages: [{ role: 'user', content: 'hi' }] });
 */
export function anthropicHistory(body: AnthropicBody): ClientHistory {
  const out = new HistoryBuilder();
  if (body.system !== undefined && body.system !== null) {
    const text = systemText(body.system);
    if (text !== '') out.push({ role: 'system', content: text }, { message: -1, blocks: null });
  }
  body.messages.forEach((m: unknown, i) => {
    const fail = failAt(`messages[${i}]`);
    if (!isRecord(m)) fail('is not an object');
    const msg = m as Record<string, unknown>;
    const whole = typeof msg.content === 'string';
    const parts = blockParts(msg.content, fail);
    const all = whole ? null : parts.map((_, b) => b);
    switch (msg.role) {
      case 'user':
        pushUser(out, parts, i, whole);
        break;
      case 'assistant':
        out.push(
          { role: 'assistant', content: parts.map((p) => partText(p, out.calls)).join('\n') },
          { message: i, blocks: all },
        );
        break;
      case 'system':
        out.push(
          { role: 'system', content: parts.map((p) => partText(p, out.calls)).join('\n') },
          { message: i, blocks: all },
        );
        break;
      default:
        fail(`"role" must be "user", "assistant" or "system", got ${JSON.stringify(msg.role)}`);
    }
  });
  return out.done();
}
