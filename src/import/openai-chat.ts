import type { Fail } from './anthropic-blocks.js';
import {
  type BuilderMessage,
  ConversationBuilder,
  type MessagePart,
} from './conversation-builder.js';
import { messageArray } from './json-source.js';
import { isRecord, sourceError } from './source-error.js';
import type { ImportedTurn } from './turn.js';

function contentText(content: unknown, fail: Fail): string | null {
  if (content === undefined || content === null) return null;
  if (typeof content === 'string') return content;
  if (!Array.isArray(content))
    fail('"content" must be a string, null or an array of content parts');
  const out: string[] = [];
  for (const [i, p] of (content as unknown[]).entries()) {
    if (!isRecord(p) || typeof p.type !== 'string') fail(`content part ${i} has no "type"`);
    const part = p as Record<string, unknown>;
    switch (part.type) {
      case 'text':
        if (typeof part.text !== 'string') fail(`content part ${i} (text) has no string "text"`);
        out.push(part.text as string);
        break;
      case 'refusal':
        out.push(`[refusal]\n${typeof part.refusal === 'string' ? part.refusal : ''}`);
        break;
      case 'image_url': {
        const url = isRecord(part.image_url) ? part.image_url.url : undefined;
        const label = typeof url === 'string' && !url.startsWith('data:') ? `: ${url}` : '';
        out.push(`[image${label}]`);
        break;
      }
      case 'input_audio':
        out.push('[audio]');
        break;
      case 'file': {
        const f = isRecord(part.file) ? part.file : {};
        out.push(`[file${typeof f.filename === 'string' ? `: ${f.filename}` : ''}]`);
        break;
      }
      default:
        out.push(`[${part.type}]\n${JSON.stringify(part, null, 1)}`);
    }
  }
  return out.join('\n');
}

function toolCalls(calls: unknown, fail: Fail): MessagePart[] {
  if (calls === undefined || calls === null) return [];
  if (!Array.isArray(calls)) fail('"tool_calls" must be an array');
  return (calls as unknown[]).map((c, j): MessagePart => {
    if (!isRecord(c) || typeof c.id !== 'string') fail(`tool_calls[${j}] has no string "id"`);
    const call = c as Record<string, unknown>;
    // `function` calls carry JSON text in `arguments` (kept verbatim); `custom` tools free text.
    const fn = isRecord(call.function) ? call.function : isRecord(call.custom) ? call.custom : null;
    if (!fn || typeof fn.name !== 'string') fail(`tool_calls[${j}] has no function "name"`);
    const f = fn as Record<string, unknown>;
    const input =
      typeof f.arguments === 'string' ? f.arguments : typeof f.input === 'string' ? f.input : '';
    return { kind: 'tool_use', id: call.id as string, name: f.name as string, input };
  });
}

/** One OpenAI message reduced to the builder's form, and the legacy call it leaves open. */
export interface OpenAiReduced {
  message: BuilderMessage;
  /** Id of a legacy `function_call` the next `function` message answers (null when none). */
  legacyCall: string | null;
}

/**
 * Reduces one OpenAI Chat Completions message (`system`, `developer`, `user`, `assistant`,
 * `tool`, legacy `function`) to the builder's role and parts: `system`/`developer` become
 * system text, a `tool` message is a user message carrying one tool result (matched by
 * `tool_call_id`), a `function` message answers `legacyCall`. `index` names legacy calls.
 *
 * @example
 * openAiMessageParts({ role: 'tool', tool_call_id: 'c1', content: 'ok' }, 3, null, fail);
 */
export function openAiMessageParts(
  msg: Record<string, unknown>,
  index: number,
  legacyCall: string | null,
  fail: Fail,
): OpenAiReduced {
  const text = () => contentText(msg.content, fail);
  switch (msg.role) {
    case 'system':
    case 'developer':
    case 'user':
      return {
        message: {
          role: msg.role === 'user' ? 'user' : 'system',
          parts: [{ kind: 'text', text: text() ?? '' }],
        },
        legacyCall,
      };
    case 'assistant': {
      const parts: MessagePart[] = [];
      const t = text();
      if (t !== null) parts.push({ kind: 'text', text: t });
      if (typeof msg.refusal === 'string')
        parts.push({ kind: 'text', text: `[refusal]\n${msg.refusal}` });
      parts.push(...toolCalls(msg.tool_calls, fail));
      let legacy = legacyCall;
      if (isRecord(msg.function_call) && typeof msg.function_call.name === 'string') {
        legacy = `function_call_${index}`;
        const args = msg.function_call.arguments;
        parts.push({
          kind: 'tool_use',
          id: legacy,
          name: msg.function_call.name,
          input: typeof args === 'string' ? args : '',
        });
      }
      return { message: { role: 'assistant', parts }, legacyCall: legacy };
    }
    case 'tool':
      if (typeof msg.tool_call_id !== 'string') {
        fail('a "tool" message needs the "tool_call_id" of the call it answers');
      }
      return {
        message: {
          role: 'user',
          parts: [
            {
              kind: 'tool_result',
              toolUseId: msg.tool_call_id as string,
              content: text() ?? '',
              isError: false,
            },
          ],
        },
        legacyCall,
      };
    case 'function':
      return {
        message: {
          role: 'user',
          parts: [
            {
              kind: 'tool_result',
              toolUseId: legacyCall ?? `function_${index}`,
              content: text() ?? '',
              isError: false,
            },
          ],
        },
        legacyCall: null,
      };
    default:
      return fail(
        `unknown "role" ${JSON.stringify(msg.role)}; expected system, developer, user, assistant, tool or function`,
      );
  }
}

/**
 * Parses an OpenAI Chat Completions history: a JSON array of messages, or a request body
 * `{ messages }`. Roles `system`/`developer` become system turns; each `tool` message (matched by
 * `tool_call_id`) and each legacy `function` message is attached to the assistant turn that
 * called it.
 *
 * @example
 * parseOpenAiMessages('[{"role":"user","content":"hi"}]', 'chat.json');
 */
export function parseOpenAiMessages(text: string, source: string): ImportedTurn[] {
  const { messages, lineOf } = messageArray(text, source, 'an OpenAI Chat Completions history');
  const builder = new ConversationBuilder();
  const turns: ImportedTurn[] = [];
  let legacyCall: string | null = null;
  for (const [i, m] of messages.entries()) {
    const fail: Fail = (problem) => {
      throw sourceError(source, lineOf(i), `message ${i}: ${problem}`);
    };
    if (!isRecord(m)) fail('is not an object');
    const r = openAiMessageParts(m as Record<string, unknown>, i, legacyCall, fail);
    legacyCall = r.legacyCall;
    turns.push(...builder.push(r.message));
  }
  turns.push(...builder.flush());
  return turns;
}
