import { anthropicParts, type Fail } from './anthropic-blocks.js';
import { ConversationBuilder } from './conversation-builder.js';
import { messageArray } from './json-source.js';
import { isRecord, sourceError } from './source-error.js';
import type { ImportedTurn } from './turn.js';

/**
 * Parses an Anthropic Messages API history: a JSON array of `{ role, content }` messages, or a
 * request body `{ system?, messages }`. `tool_result` blocks are attached to the `tool_use` they
 * answer. The top-level `system` prompt is not a turn of the history and is not imported.
 *
 * @example
 * parseAnthropicMessages('[{"role":"user","content":"hi"}]', 'chat.json');
 */
export function parseAnthropicMessages(text: string, source: string): ImportedTurn[] {
  const { messages, lineOf } = messageArray(text, source, 'an Anthropic Messages history');
  const builder = new ConversationBuilder();
  const turns: ImportedTurn[] = [];
  for (const [i, m] of messages.entries()) {
    const fail: Fail = (problem) => {
      throw sourceError(source, lineOf(i), `message ${i}: ${problem}`);
    };
    if (!isRecord(m)) fail('is not an object');
    const msg = m as Record<string, unknown>;
    if (msg.role !== 'user' && msg.role !== 'assistant') {
      fail(`"role" must be "user" or "assistant", got ${JSON.stringify(msg.role)}`);
    }
    turns.push(
      ...builder.push({
        role: msg.role as 'user' | 'assistant',
        parts: anthropicParts(msg.content, fail),
      }),
    );
  }
  turns.push(...builder.flush());
  return turns;
}
